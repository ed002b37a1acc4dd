//! The fixed names of the fieldless enums, as files, share links and the page spell them.

/// A fieldless enum whose variants have fixed names. They are the names serde writes for the same
/// variants (`tests/it/names.rs` checks every one), so code that needs a name or reads one back
/// uses this table instead of a round trip through JSON.
pub trait Named: Copy + PartialEq + Sized + 'static {
    /// Every variant, in declaration order.
    const VARIANTS: &'static [Self];

    /// The variant's name, e.g. `stale_write_accepted`.
    fn name(self) -> &'static str;

    /// The variant with this name, if there is one.
    fn from_name(name: &str) -> Option<Self> {
        Self::VARIANTS.iter().copied().find(|v| v.name() == name)
    }
}

/// Implements [`Named`] from one table of variants and names.
macro_rules! named {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $crate::names::Named for $ty {
            const VARIANTS: &'static [Self] = &[$($ty::$variant),+];

            fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }
    };
}

pub(crate) use named;
