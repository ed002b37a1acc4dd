//! What an embedded view shows besides the diagram (`embed=controls,caption`).

use fencelab_core::names::Named;

use crate::names::{listed, Param, Part};
use crate::{bad, LinkError};

/// What an embedded view shows besides the diagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Embed {
    /// The playback controls.
    pub controls: bool,
    /// The caption.
    pub caption: bool,
    /// The story picker and title card.
    pub picker: bool,
    /// The diagram's legend.
    pub legend: bool,
    /// The state panels beside the diagram.
    pub panels: bool,
    /// The event log.
    pub log: bool,
}

impl Embed {
    /// The parts an embed shows when its author names none: the controls and the caption (the
    /// `<fencelab-player>` element's default, and the share panel's embed code).
    pub const USUAL: Embed = Embed {
        controls: true,
        caption: true,
        picker: false,
        legend: false,
        panels: false,
        log: false,
    };

    /// The flag of `part`; `None` for the diagram, which always shows.
    fn flag(&mut self, part: Part) -> Option<&mut bool> {
        match part {
            Part::Diagram => None,
            Part::Picker => Some(&mut self.picker),
            Part::Controls => Some(&mut self.controls),
            Part::Caption => Some(&mut self.caption),
            Part::Legend => Some(&mut self.legend),
            Part::Panels => Some(&mut self.panels),
            Part::Log => Some(&mut self.log),
        }
    }

    /// Whether `part` shows (the diagram always does).
    pub fn has(mut self, part: Part) -> bool {
        self.flag(part).is_none_or(|on| *on)
    }

    /// Turns `part` on; the diagram changes nothing, as it always shows.
    pub fn show(&mut self, part: Part) {
        if let Some(on) = self.flag(part) {
            *on = true;
        }
    }

    /// The parts shown besides the diagram, in the order a link writes them.
    pub fn shown(self) -> impl Iterator<Item = Part> {
        Part::VARIANTS.iter().copied().filter(move |p| *p != Part::Diagram && self.has(*p))
    }

    /// The `embed=` value: the parts shown, or `diagram` alone for none.
    pub fn value(self) -> String {
        let names: Vec<&str> = self.shown().map(Part::name).collect();
        match names.is_empty() {
            true => Part::Diagram.name().to_string(),
            false => names.join(","),
        }
    }

    /// Reads an `embed=` value (comma-separated part names; empty names are skipped).
    pub fn read(value: &str) -> Result<Embed, LinkError> {
        let mut embed = Embed::default();
        for name in value.split(',').filter(|s| !s.is_empty()) {
            let part = Part::from_name(name).ok_or_else(|| {
                let parts = listed(Part::VARIANTS.iter().map(|p| p.name()), "and");
                bad(Param::Embed.name(), format!("unknown part \"{name}\" (parts are: {parts})"))
            })?;
            embed.show(part);
        }
        Ok(embed)
    }

    /// Reads an `embed=` value leniently: unknown parts are left out.
    pub(crate) fn read_known(value: &str) -> Embed {
        let mut embed = Embed::default();
        value.split(',').filter_map(Part::from_name).for_each(|part| embed.show(part));
        embed
    }
}
