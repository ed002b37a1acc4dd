//! The page's numbers and labels in words: counts with thousands separators, file sizes, the
//! marks under the scrubber, the diagram's summary for screen readers and the big jump's size.
//! Plain functions, so they are tested without a browser.

/// `n` with a comma between each group of three digits, as en-US writes it: `100,000`.
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A file's size for a reader: bytes below a kilobyte, else kB or MB with one decimal
/// (1 kB = 1,000 bytes, as file managers show them).
pub fn file_size(bytes: f64) -> String {
    match bytes {
        b if b < 1_000.0 => format!("{} bytes", b as u64),
        b if b < 1_000_000.0 => format!("{} kB", one_decimal(b / 1_000.0)),
        b => format!("{} MB", one_decimal(b / 1_000_000.0)),
    }
}

/// `v` with exactly one decimal, formatted through integers (the float formatter with a
/// precision would add its own code to the page).
fn one_decimal(v: f64) -> String {
    let tenths = (v * 10.0).round() as u64;
    format!("{}.{}", tenths / 10, tenths % 10)
}

/// How far a big jump (Page Up/Down, Shift+Left/Right) moves in a run of `end` steps: a tenth
/// of it, at least one step.
pub fn big_jump(end: usize) -> usize {
    (end / 10).max(1)
}

/// The label of a mark under the scrubber standing for `count` findings from step `first` to
/// step `last` (numbered as the reader sees them), the first of which broke `what`.
pub fn mark_label(first: usize, last: usize, count_: usize, what: &str) -> String {
    match count_ {
        0 | 1 => format!("step {}: {what}", count(first)),
        n if first == last => format!("{n} findings at step {}, the first: {what}", count(first)),
        n => format!(
            "{n} findings at steps {} to {}, the first: {what} at step {}",
            count(first),
            count(last),
            count(first)
        ),
    }
}

/// What the marks under the scrubber stand for, told to screen readers and in an embed: how
/// many findings, and how many marks when findings close together share one (`marks` 0: not
/// placed yet). With `listed`, it points to the Findings list.
pub fn marks_summary(findings: usize, marks: usize, listed: bool) -> String {
    let (what, list) = match findings {
        1 => ("1 finding is".to_string(), "; the Findings list names it"),
        n => (format!("{} findings are", count(n)), "; the Findings list names each"),
    };
    let shared = match marks {
        0 => String::new(),
        m if m >= findings => String::new(),
        1 => " by 1 mark, which they share".to_string(),
        m => format!(" by {} marks (findings close together share one)", count(m)),
    };
    format!("{what} marked under the scrubber{shared}{}.", if listed { list } else { "" })
}

/// The most lanes the diagram's summary names; beyond them it counts the rest.
pub const NAMED_LANES: usize = 6;

/// What the diagram says to screen readers: its size, a few of its lanes, where the player is
/// and what happened at that step.
pub fn diagram_summary(lanes: &[&str], position: usize, len: usize, caption: &str) -> String {
    let mut names = lanes.iter().take(NAMED_LANES).copied().collect::<Vec<_>>().join(", ");
    if lanes.len() > NAMED_LANES {
        names.push_str(&format!(" and {} more", count(lanes.len() - NAMED_LANES)));
    }
    let lanes_word = if lanes.len() == 1 { "lane" } else { "lanes" };
    let mut out = format!(
        "Swimlane diagram, {} {lanes_word} ({names}), step {} of {}",
        count(lanes.len()),
        count(position),
        count(len)
    );
    if caption.is_empty() {
        out.push('.');
    } else {
        out.push_str(": ");
        out.push_str(caption);
    }
    out
}

/// The width of a token pill for `text` (e.g. `g1234`): wide enough for its digits in the
/// 12 px monospace font, never narrower than the two-digit pill.
pub fn pill_width(text: &str) -> f64 {
    (text.chars().count() as f64 * 7.6 + 10.0).max(30.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marks_summary_counts_the_marks_when_findings_share_them() {
        assert_eq!(
            marks_summary(88, 5, false),
            "88 findings are marked under the scrubber by 5 marks (findings close together share one)."
        );
        assert_eq!(
            marks_summary(2, 1, true),
            "2 findings are marked under the scrubber by 1 mark, which they share; the Findings list names each."
        );
        assert_eq!(
            marks_summary(1_200, 1_200, true),
            "1,200 findings are marked under the scrubber; the Findings list names each."
        );
        assert_eq!(marks_summary(1, 1, false), "1 finding is marked under the scrubber.");
        assert_eq!(marks_summary(3, 0, false), "3 findings are marked under the scrubber.");
    }

    #[test]
    fn counts_have_thousands_separators() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (100_000, "100,000"),
            (1_234_567, "1,234,567"),
        ];
        for (n, text) in cases {
            assert_eq!(count(n), text);
        }
    }

    #[test]
    fn file_sizes_read_as_a_file_manager_shows_them() {
        assert_eq!(file_size(512.0), "512 bytes");
        assert_eq!(file_size(2_500.0), "2.5 kB");
        assert_eq!(file_size(19_300_000.0), "19.3 MB");
        assert_eq!(file_size(20_000_000.0), "20.0 MB");
    }

    #[test]
    fn a_big_jump_is_a_tenth_of_the_run() {
        assert_eq!(big_jump(100_000), 10_000);
        assert_eq!(big_jump(25), 2);
        assert_eq!(big_jump(3), 1);
    }

    #[test]
    fn a_marks_label_tells_findings_at_one_step_from_findings_nearby() {
        assert_eq!(mark_label(12, 12, 1, "stale write"), "step 12: stale write");
        assert_eq!(
            mark_label(1200, 1200, 2, "stale write"),
            "2 findings at step 1,200, the first: stale write"
        );
        assert_eq!(
            mark_label(12, 40, 3, "stale write"),
            "3 findings at steps 12 to 40, the first: stale write at step 12"
        );
    }

    #[test]
    fn the_diagram_summary_names_a_few_lanes_and_counts_the_rest() {
        let few = ["authority", "w0", "db"];
        assert_eq!(
            diagram_summary(&few, 5, 1_000, "w0 writes"),
            "Swimlane diagram, 3 lanes (authority, w0, db), step 5 of 1,000: w0 writes"
        );
        let names: Vec<String> = (0..202).map(|i| format!("w{i}")).collect();
        let many: Vec<&str> = names.iter().map(String::as_str).collect();
        let summary = diagram_summary(&many, 0, 100_000, "");
        assert_eq!(
            summary,
            "Swimlane diagram, 202 lanes (w0, w1, w2, w3, w4, w5 and 196 more), step 0 of 100,000."
        );
    }

    #[test]
    fn a_pill_grows_with_its_digits() {
        assert_eq!(pill_width("g7"), 30.0);
        assert!(pill_width("g1234") >= 5.0 * 7.3 + 8.0);
        assert!(pill_width("g123456") > pill_width("g1234"));
    }
}
