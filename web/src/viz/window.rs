//! What part of a long run to draw: the band of content a scrolling box shows, the rows of a
//! list within it, and where the box scrolls to keep the current step in view. Plain arithmetic
//! on CSS pixels; the shell measures the boxes (`hooks/use_window.rs`) and the components draw
//! what these say, so the page holds the same number of elements however long the run is.

use std::ops::Range;

use crate::viz::words::count;
use fencelab_core::picture::layout::{Fit, Layout, ROW};

/// How much a long run draws beyond what is on screen, above and below, in CSS pixels: enough
/// that a step or a short scroll rarely needs anything new drawn.
pub const MARGIN: f64 = 150.0;
/// The height of one row of a long run's log, in CSS pixels (the style sheet gives those rows
/// exactly this height, so a row's place follows from its number).
pub const LOG_ROW: f64 = 30.0;

/// What a scrolling box shows: its scroll offsets and its size, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// How far the box is scrolled down.
    pub top: f64,
    /// Its visible height.
    pub height: f64,
    /// How far it is scrolled to the right.
    pub left: f64,
    /// Its visible width (0: not measured, so it never scrolls sideways).
    pub width: f64,
}

impl View {
    /// What a box is taken to show before it has been measured: its top, and a tall screen's
    /// worth of it, so the first drawing fills it.
    pub const UNMEASURED: View = View { top: 0.0, height: 1200.0, left: 0.0, width: 0.0 };

    /// What a box `height` pixels tall that keeps `y` in its middle shows.
    pub fn centred(y: f64, height: f64) -> View {
        View { top: (y - height / 2.0).max(0.0), height, ..View::UNMEASURED }
    }

    /// The band of content to draw, `(from, to)`: the view and at least `margin` pixels above
    /// and below it, with both ends on multiples of `margin`, so scrolling less than `margin`
    /// mostly draws the same band.
    pub fn band(self, margin: f64) -> (f64, f64) {
        let margin = margin.max(1.0);
        let from = ((self.top / margin).floor() - 1.0) * margin;
        let to = (((self.top + self.height) / margin).ceil() + 1.0) * margin;
        (from.max(0.0), to)
    }

    /// The view scrolled so that `y` is at least `margin` pixels inside it: the same view when
    /// it already is, else one centred on `y` (never above the top).
    pub fn follow(self, y: f64, margin: f64) -> View {
        let margin = margin.min(self.height / 2.0);
        if y >= self.top + margin && y <= self.top + self.height - margin {
            return self;
        }
        View { top: (y - self.height / 2.0).max(0.0).round(), ..self }
    }

    /// The view scrolled sideways so that `from..to` (a step's marks, with room for their
    /// labels) is in view, in a box narrower than its content (`content` pixels wide); a box
    /// that shows everything, or that was not measured, does not move.
    pub fn follow_x(self, (from, to): (f64, f64), content: f64) -> View {
        if self.width <= 0.0 || content <= self.width {
            return self;
        }
        // Room on the right for the labels of the step's marks.
        let (from, to) = (from - 30.0, to + 220.0);
        if from >= self.left && to <= self.left + self.width {
            return self;
        }
        let left = if to - from > self.width { from } else { (from + to - self.width) / 2.0 };
        // Not `clamp`, whose panic message would bring float formatting into the page.
        View { left: left.min(content - self.width).max(0.0).round(), ..self }
    }
}

/// How far inside a box's edges [`reveal_x`] keeps the marks: half a lane and a little, so a
/// mark's lane header, centred over it, shows whole.
const REVEAL_PAD: f64 = 80.0;

/// How far a box `width` pixels wide, over content `content` pixels wide, scrolls sideways to
/// show a chosen finding: its own mark at `own` and its witness's marks at `xs`. All of them,
/// centred, when they fit; else the own mark with the witness lanes on the side of the nearest
/// one, as far as they fit; and when even the nearest is more than a box away (a wide history,
/// whose writers sit far from the stores), the witness from its leftmost lane, so the writers
/// the finding is about show rather than the lanes at the far right. `None` when nothing needs
/// to move: nothing to show, a box that shows everything, or one not measured.
pub fn reveal_x(xs: &[f64], own: Option<f64>, width: f64, content: f64) -> Option<f64> {
    if width <= 0.0 || content <= width {
        return None;
    }
    let all = || xs.iter().copied().chain(own);
    let from = all().reduce(f64::min)? - REVEAL_PAD;
    let to = all().reduce(f64::max)? + REVEAL_PAD;
    let nearest =
        |o: f64| xs.iter().copied().min_by(|a, b| (a - o).abs().total_cmp(&(b - o).abs()));
    let left = match own.and_then(|o| Some((o, nearest(o)?))) {
        _ if to - from <= width => (from + to - width) / 2.0,
        Some((o, x)) if (x - o).abs() + 2.0 * REVEAL_PAD <= width => {
            if x < o {
                o + REVEAL_PAD - width
            } else {
                o - REVEAL_PAD
            }
        }
        _ => xs.iter().copied().reduce(f64::min).unwrap_or(from + REVEAL_PAD) - REVEAL_PAD,
    };
    Some(left.min(content - width).max(0.0).round())
}

/// How far the page scrolls so a box at `top`, `height` pixels tall, shows below a bar that
/// covers the top `cover` pixels of a `viewport` pixels tall window (the sticky player): none
/// when its top is already below the bar and it ends in the window, else its top goes just
/// under the bar, so its own sticky headers show.
pub fn below_cover(cover: f64, viewport: f64, top: f64, height: f64) -> f64 {
    const GAP: f64 = 8.0;
    if top >= cover && top + height <= viewport {
        return 0.0;
    }
    (top - cover - GAP).round()
}

/// How far the page scrolls so the current step's row, `row` pixels down the window, shows with
/// `margin` pixels around it between a bar covering the window's top `cover` pixels and the
/// window's bottom: none when it already does, or when the bar leaves no room for it.
pub fn row_on_screen(cover: f64, viewport: f64, row: f64, margin: f64) -> f64 {
    if cover + 2.0 * margin > viewport {
        return 0.0;
    }
    if row + margin > viewport {
        (row + margin - viewport).round()
    } else if row - margin < cover {
        (row - margin - cover).round()
    } else {
        0.0
    }
}

/// How far the page scrolls to show, in a `viewport` pixels tall window, what runs from `top` to
/// `bottom` (window coordinates): the least that shows both ends, or its top alone when both do
/// not fit, since the text there is read first.
pub fn keep_in_view(top: f64, bottom: f64, viewport: f64) -> f64 {
    if bottom - top > viewport {
        top.round()
    } else if bottom > viewport {
        (bottom - viewport).round()
    } else if top < 0.0 {
        top.round()
    } else {
        0.0
    }
}

/// Where a box keeps the reader's place: the current row's height in its content, how far from
/// the box's edges it stays, and, for a box that can scroll sideways, the step's horizontal
/// extent and the content's width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Focus {
    /// The row's height in the box's content.
    pub y: f64,
    /// How far inside the box's top and bottom it stays.
    pub margin: f64,
    /// The step's horizontal extent, if the box may scroll sideways to it.
    pub x: Option<(f64, f64)>,
    /// The content's width.
    pub width: f64,
}

impl Focus {
    /// Where the diagram's box keeps the step just played at `position`, with the lanes
    /// stretched as `fit` says: its row, below the lane headers (`heads` pixels tall), and the
    /// lanes it touched.
    pub fn diagram(layout: &Layout, position: usize, fit: Fit, heads: f64) -> Focus {
        let x = position.checked_sub(1).and_then(|step| layout.focus_x(step));
        Focus {
            y: layout.now_y(position) + heads,
            margin: ROW * 2.5,
            x: x.map(|(from, to)| (fit.x(from), fit.x(to))),
            width: fit.width(),
        }
    }

    /// Where a long run's log keeps the row of the step just played at `position`.
    pub fn log(position: usize) -> Focus {
        let row = position.saturating_sub(1) as f64;
        Focus { y: (row + 0.5) * LOG_ROW, margin: LOG_ROW * 1.5, x: None, width: 0.0 }
    }

    /// `view` moved to this focus.
    pub fn apply(&self, view: View) -> View {
        let view = view.follow(self.y, self.margin);
        match self.x {
            Some(x) => view.follow_x(x, self.width),
            None => view,
        }
    }
}

/// The rows of a list of `len` rows, each `row` pixels tall, that lie within `(from, to)`.
pub fn rows_within((from, to): (f64, f64), row: f64, len: usize) -> Range<usize> {
    let row = row.max(1.0);
    let first = ((from / row).floor().max(0.0) as usize).min(len);
    let last = ((to / row).ceil().max(0.0) as usize).clamp(first, len);
    first..last
}

/// The part of a long run's diagram an SVG export holds: the band the page draws around the
/// view, which is all the page has drawn, with a title that says which steps it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Crop {
    /// Where the band starts in the diagram, in CSS pixels.
    pub top: f64,
    /// Its height.
    pub height: f64,
    /// Which steps it shows, e.g. "Steps 49,001 to 49,040 of 100,000".
    pub title: String,
}

/// The crop of a diagram `content` pixels tall whose steps sit on `rows` (their centres, in
/// order) for the band `(from, to)` drawn after `position` steps: what an export of a long run
/// holds. Steps after the position are not drawn yet, so the title counts only those played
/// and the crop stops below them.
pub fn export_crop(rows: &[f64], (from, to): (f64, f64), position: usize, content: f64) -> Crop {
    let top = from.clamp(0.0, content);
    let bottom = to.clamp(top, content);
    let first = rows.partition_point(|y| *y < top);
    let last = rows.partition_point(|y| *y <= bottom).min(position);
    // Steps not played are not drawn: the crop ends a row below the last one played, so it
    // holds no empty band.
    let bottom = match last.checked_sub(1).and_then(|i| rows.get(i)).filter(|_| last > first) {
        Some(row) => bottom.min(row + ROW),
        None => bottom.min(top + ROW),
    };
    let title = if last > first {
        format!("Steps {} to {} of {}", count(first + 1), count(last), count(rows.len()))
    } else {
        format!(
            "No steps of {} played in this part yet (the diagram draws a step once it is played)",
            count(rows.len())
        )
    };
    Crop { top, height: bottom - top, title }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_witness_is_centred_when_it_fits_and_shown_from_its_leftmost_lane_when_not() {
        assert_eq!(reveal_x(&[], None, 800.0, 4_000.0), None);
        assert_eq!(reveal_x(&[100.0], None, 800.0, 700.0), None);
        assert_eq!(reveal_x(&[1_000.0], Some(1_400.0), 800.0, 4_000.0), Some(800.0));
        assert_eq!(reveal_x(&[], Some(1_400.0), 800.0, 4_000.0), Some(1_000.0));
        // The own mark with the nearest witness lane beside it, when both fit but not all.
        assert_eq!(reveal_x(&[300.0, 1_000.0], Some(1_200.0), 800.0, 4_000.0), Some(480.0));
        assert_eq!(reveal_x(&[1_300.0, 3_000.0], Some(1_200.0), 800.0, 4_000.0), Some(1_120.0));
        // A writer far left of its store: the writers' lanes, not the store's.
        assert_eq!(reveal_x(&[1_800.0, 1_700.0], Some(26_000.0), 1_000.0, 27_000.0), Some(1_620.0));
        // Never past either end.
        assert_eq!(reveal_x(&[20.0, 60.0], None, 800.0, 4_000.0), Some(0.0));
        assert_eq!(reveal_x(&[3_990.0], None, 800.0, 4_000.0), Some(3_200.0));
    }

    #[test]
    fn a_box_under_a_sticky_bar_moves_just_below_it() {
        // Its top hidden under a 220-pixel bar: moved to 228.
        assert_eq!(below_cover(220.0, 900.0, 126.0, 600.0), -102.0);
        // Below the bar and whole in the window: stays.
        assert_eq!(below_cover(220.0, 900.0, 240.0, 600.0), 0.0);
        // Running past the window's bottom: its top goes up under the bar.
        assert_eq!(below_cover(220.0, 900.0, 500.0, 600.0), 272.0);
        assert_eq!(below_cover(0.0, 900.0, -40.0, 300.0), -48.0);
    }

    #[test]
    fn the_current_row_stays_between_the_bar_and_the_window_bottom() {
        // Below the window's bottom (a tall diagram at a story's top): up by what is missing.
        assert_eq!(row_on_screen(0.0, 900.0, 1_000.0, 70.0), 170.0);
        // Under the bar: down just below it.
        assert_eq!(row_on_screen(300.0, 900.0, 250.0, 70.0), -120.0);
        // In between: stays.
        assert_eq!(row_on_screen(300.0, 900.0, 500.0, 70.0), 0.0);
        // No room between the bar and the bottom: the page is not moved.
        assert_eq!(row_on_screen(700.0, 740.0, 900.0, 70.0), 0.0);
    }

    #[test]
    fn a_caption_and_its_mark_show_together_or_the_caption_first() {
        assert_eq!(keep_in_view(100.0, 700.0, 900.0), 0.0);
        // The mark below the window: up just enough, the caption still on screen.
        assert_eq!(keep_in_view(100.0, 950.0, 900.0), 50.0);
        // The caption above the window: down to it, the mark still on screen.
        assert_eq!(keep_in_view(-41.0, 600.0, 900.0), -41.0);
        // Too tall for the window: the caption at its top.
        assert_eq!(keep_in_view(-180.0, 900.0, 780.0), -180.0);
        assert_eq!(keep_in_view(300.0, 1_300.0, 780.0), 300.0);
    }

    fn view(top: f64, height: f64) -> View {
        View { top, height, ..View::UNMEASURED }
    }

    #[test]
    fn the_band_covers_the_view_and_a_margin_and_moves_in_whole_margins() {
        let (from, to) = view(1050.0, 600.0).band(400.0);
        assert!(from <= 1050.0 - 400.0 && to >= 1650.0 + 400.0, "{from}..{to}");
        assert_eq!((from, to), (400.0, 2400.0));
        // Scrolling less than a margin mostly draws the same band; a margin's worth moves it.
        assert_eq!(view(1150.0, 600.0).band(400.0), (from, to));
        assert_eq!(view(1250.0, 600.0).band(400.0), (800.0, 2400.0));
        // Never above the top.
        assert_eq!(view(0.0, 600.0).band(400.0), (0.0, 1200.0));
    }

    #[test]
    fn a_row_in_view_leaves_the_view_alone_and_one_outside_is_centred() {
        let v = view(1000.0, 600.0);
        assert_eq!(v.follow(1300.0, 75.0), v);
        assert_eq!(v.follow(1050.0, 75.0).top, 750.0);
        assert_eq!(v.follow(1590.0, 75.0).top, 1290.0);
        assert_eq!(v.follow(5000.0, 75.0).top, 4700.0);
        assert_eq!(v.follow(10.0, 75.0).top, 0.0);
        // Following again changes nothing: the row is in view now.
        let moved = v.follow(5000.0, 75.0);
        assert_eq!(moved.follow(5000.0, 75.0), moved);
        // A margin larger than half the box still keeps the row in view.
        let low = view(0.0, 100.0);
        assert_eq!(low.follow(50.0, 75.0), low);
    }

    #[test]
    fn a_narrow_box_scrolls_sideways_to_the_step_and_a_wide_one_never_does() {
        let narrow = View { width: 360.0, ..view(0.0, 600.0) };
        assert_eq!(narrow.follow_x((100.0, 120.0), 1200.0).left, 0.0);
        let moved = narrow.follow_x((900.0, 920.0), 1200.0);
        assert_eq!(moved.left, 825.0);
        assert_eq!(moved.follow_x((900.0, 920.0), 1200.0), moved);
        assert_eq!(narrow.follow_x((500.0, 520.0), 1200.0).left, 425.0);
        let wide = View { width: 1400.0, ..narrow };
        assert_eq!(wide.follow_x((900.0, 920.0), 1200.0), wide);
        assert_eq!(view(0.0, 600.0).follow_x((900.0, 920.0), 1200.0).left, 0.0, "not measured");
    }

    #[test]
    fn the_rows_within_a_band_are_those_it_touches() {
        assert_eq!(rows_within((0.0, 300.0), 30.0, 100), 0..10);
        assert_eq!(rows_within((45.0, 100.0), 30.0, 100), 1..4);
        assert_eq!(rows_within((2900.0, 4000.0), 30.0, 100), 96..100);
        assert_eq!(rows_within((5000.0, 6000.0), 30.0, 100), 100..100);
        assert_eq!(rows_within((0.0, 300.0), 30.0, 0), 0..0);
    }

    #[test]
    fn an_export_of_a_long_run_holds_the_band_drawn_and_says_which_steps() {
        let rows: Vec<f64> = (0..100_000).map(|i| 22.0 + 30.0 * i as f64).collect();
        let content = 22.0 + 30.0 * 100_000.0 + 36.0;
        // At the end, scrolled to the middle: the steps in the band, all played.
        let crop = export_crop(&rows, (1_500_000.0, 1_501_200.0), 100_000, content);
        assert_eq!((crop.top, crop.height), (1_500_000.0, 1_200.0));
        assert_eq!(crop.title, "Steps 50,001 to 50,040 of 100,000");
        // Only the steps played count.
        let crop = export_crop(&rows, (1_500_000.0, 1_501_200.0), 50_010, content);
        assert_eq!(crop.title, "Steps 50,001 to 50,010 of 100,000");
        // It stops a row below the last step played: no blank band below.
        assert_eq!(crop.top + crop.height, rows[50_009] + ROW);
        let crop = export_crop(&rows, (1_500_000.0, 1_501_200.0), 10, content);
        assert!(crop.title.starts_with("No steps of 100,000 played"), "{}", crop.title);
        assert_eq!(crop.height, ROW);
        // Never past either end of the diagram.
        let crop = export_crop(&rows, (-150.0, 1_050.0), 100_000, content);
        assert_eq!((crop.top, crop.height), (0.0, 1_050.0));
        assert_eq!(crop.title, "Steps 1 to 35 of 100,000");
        let crop = export_crop(&rows, (content - 300.0, content + 900.0), 100_000, content);
        assert_eq!(crop.top + crop.height, rows[99_999] + ROW);
        assert!(crop.top + crop.height < content);
        assert!(crop.title.ends_with("to 100,000 of 100,000"), "{}", crop.title);
    }
}
