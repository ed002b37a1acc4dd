//! The fixed names of the fieldless enums, as files, share links and the page spell them.

use serde::ser::{self, Impossible, Serialize};
use std::fmt;

/// A fieldless enum whose variants have fixed names: the names serde writes for them. Each name
/// is spelled once, by serde's attributes (`rename_all`, `rename`); this trait reads it back from
/// serde's derived `Serialize`, so code that needs a name uses no table of its own and no round
/// trip through JSON.
///
/// Every type that derives `Serialize` and `strum::VariantArray` (which lists the variants and
/// compiles only for enums without fields) is `Named`.
pub trait Named: Copy + PartialEq + Serialize + Sized + 'static {
    /// Every variant, in declaration order.
    const VARIANTS: &'static [Self];

    /// The variant's name, e.g. `stale_write_accepted`.
    fn name(self) -> &'static str {
        // Only a serde attribute that writes a variant without its name (an internal tag,
        // `untagged`) could fail here, and `tests/it/names.rs` checks every named type.
        variant_name(&self).expect("a fieldless variant serializes as its name")
    }

    /// The variant with this name, if there is one.
    fn from_name(name: &str) -> Option<Self> {
        Self::VARIANTS.iter().copied().find(|v| v.name() == name)
    }
}

impl<T: strum::VariantArray + Copy + PartialEq + Serialize> Named for T {
    const VARIANTS: &'static [Self] = <T as strum::VariantArray>::VARIANTS;
}

/// The name serde writes for `value`'s enum variant, with or without fields (`acquire` for
/// `Step::Acquire { .. }`), or `None` for a value that is not written as an externally tagged
/// variant. The fields are not serialized.
pub(crate) fn variant_name<T: Serialize + ?Sized>(value: &T) -> Option<&'static str> {
    value.serialize(VariantName).ok()
}

/// A serializer that accepts only an enum variant and returns the name serde gives it.
struct VariantName;

/// The fields of a variant, skipped: only the name is wanted.
struct SkipFields(&'static str);

impl ser::SerializeTupleVariant for SkipFields {
    type Ok = &'static str;
    type Error = NotAName;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &T) -> Result<(), NotAName> {
        Ok(())
    }

    fn end(self) -> Result<&'static str, NotAName> {
        Ok(self.0)
    }
}

impl ser::SerializeStructVariant for SkipFields {
    type Ok = &'static str;
    type Error = NotAName;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        _: &T,
    ) -> Result<(), NotAName> {
        Ok(())
    }

    fn end(self) -> Result<&'static str, NotAName> {
        Ok(self.0)
    }
}

/// What [`VariantName`] reports for anything but an enum variant.
#[derive(Debug)]
struct NotAName;

impl fmt::Display for NotAName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an enum variant")
    }
}

impl std::error::Error for NotAName {}

impl ser::Error for NotAName {
    fn custom<T: fmt::Display>(_: T) -> Self {
        NotAName
    }
}

/// Refuses every kind of value but the one [`VariantName`] reads.
macro_rules! not_a_name {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)+) => {$(
        fn $method(self, $(_: $arg),*) -> Result<$ok, NotAName> {
            Err(NotAName)
        }
    )+};
}

impl ser::Serializer for VariantName {
    type Ok = &'static str;
    type Error = NotAName;
    type SerializeSeq = Impossible<&'static str, NotAName>;
    type SerializeTuple = Impossible<&'static str, NotAName>;
    type SerializeTupleStruct = Impossible<&'static str, NotAName>;
    type SerializeTupleVariant = SkipFields;
    type SerializeMap = Impossible<&'static str, NotAName>;
    type SerializeStruct = Impossible<&'static str, NotAName>;
    type SerializeStructVariant = SkipFields;

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<&'static str, NotAName> {
        Ok(variant)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<&'static str, NotAName> {
        Err(NotAName)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotAName> {
        Err(NotAName)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Result<&'static str, NotAName> {
        Ok(variant)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<SkipFields, NotAName> {
        Ok(SkipFields(variant))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<SkipFields, NotAName> {
        Ok(SkipFields(variant))
    }

    not_a_name! {
        serialize_bool(bool) -> &'static str;
        serialize_i8(i8) -> &'static str;
        serialize_i16(i16) -> &'static str;
        serialize_i32(i32) -> &'static str;
        serialize_i64(i64) -> &'static str;
        serialize_u8(u8) -> &'static str;
        serialize_u16(u16) -> &'static str;
        serialize_u32(u32) -> &'static str;
        serialize_u64(u64) -> &'static str;
        serialize_f32(f32) -> &'static str;
        serialize_f64(f64) -> &'static str;
        serialize_char(char) -> &'static str;
        serialize_str(&str) -> &'static str;
        serialize_bytes(&[u8]) -> &'static str;
        serialize_none() -> &'static str;
        serialize_unit() -> &'static str;
        serialize_unit_struct(&'static str) -> &'static str;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
    }
}
