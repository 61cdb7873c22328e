//! The flexible-version message encoding of Kafka's generated message classes
//! (`generator/.../MessageDataGenerator.java`), reimplemented for the metadata records.
//!
//! All metadata records are flexible from v0, so there is exactly one encoding per type:
//! compact strings/bytes/arrays (unsigned varint length + 1, 0 = null), big-endian fixed-width
//! integers, 16-byte UUIDs, and a trailing tagged-field section per struct. The rules that
//! must match Java byte for byte live in [`write_field`], [`read_field`] and
//! [`write_tagged_section`]:
//! - a field absent in the version must hold its default, else "Attempted to write a
//!   non-default X at version Y";
//! - a tagged field is written only when it differs from its default, tags in ascending order,
//!   merged with the unknown tags kept from decoding;
//! - null is only legal in the field's nullable versions;
//! - a known tag read at a version where the field is not tagged is an error ("Tag N is not
//!   valid for version V").

use std::collections::BTreeMap;

use bytes::Bytes;
use uuid::Uuid;

use super::RecordError;
use crate::codec::{
    put_compact_bytes, put_compact_len, put_compact_string, put_tagged_field, put_uvarint,
    ReadError, Reader,
};

/// Where a field exists and how it is encoded, from the JSON field spec.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldSpec {
    /// Rust field name (snake_case of the JSON name), used in errors.
    pub name: &'static str,
    /// First version with the field ("N+"; all metadata fields are open-ended).
    pub min_version: i16,
    /// First version where null is allowed, if any ("nullableVersions": "N+").
    pub nullable_min: Option<i16>,
    /// First tagged version and the tag ("taggedVersions": "N+", "tag": T).
    pub tagged: Option<(i16, u32)>,
}

impl FieldSpec {
    fn present(&self, version: i16) -> bool {
        version >= self.min_version
    }
    fn tagged_at(&self, version: i16) -> Option<u32> {
        match self.tagged {
            Some((min, tag)) if self.present(version) && version >= min => Some(tag),
            _ => None,
        }
    }
    fn nullable_at(&self, version: i16) -> bool {
        self.nullable_min.is_some_and(|min| version >= min)
    }
    fn malformed(&self, e: ReadError) -> RecordError {
        RecordError::Malformed {
            field: self.name,
            reason: e,
        }
    }
}

/// Why a value could not be written or read, before the field name is attached.
#[derive(Debug)]
pub(crate) enum ValueError {
    /// Null where the version does not allow it.
    Null,
    /// A primitive read or write failed.
    Read(ReadError),
    /// A nested struct failed; the error already names its field.
    Nested(Box<RecordError>),
}

impl From<ReadError> for ValueError {
    fn from(e: ReadError) -> Self {
        ValueError::Read(e)
    }
}

impl From<RecordError> for ValueError {
    fn from(e: RecordError) -> Self {
        ValueError::Nested(Box::new(e))
    }
}

/// A value that can appear as a non-null element or field: primitives, `String`, `Bytes`,
/// `Uuid` and the nested structs.
pub(crate) trait Wire: Sized {
    fn write(&self, out: &mut Vec<u8>, version: i16) -> Result<(), ValueError>;
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, ValueError>;
}

macro_rules! fixed_wire {
    ($($ty:ty => $read:ident),* $(,)?) => {$(
        impl Wire for $ty {
            fn write(&self, out: &mut Vec<u8>, _version: i16) -> Result<(), ValueError> {
                out.extend_from_slice(&self.to_be_bytes());
                Ok(())
            }
            fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, ValueError> {
                Ok(r.$read()?)
            }
        }
    )*};
}
fixed_wire!(i8 => i8, i16 => i16, u16 => u16, i32 => i32, i64 => i64, f64 => f64);

impl Wire for bool {
    fn write(&self, out: &mut Vec<u8>, _version: i16) -> Result<(), ValueError> {
        out.push(*self as u8);
        Ok(())
    }
    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, ValueError> {
        // Java: `readByte() != 0`.
        Ok(r.i8()? != 0)
    }
}

impl Wire for Uuid {
    fn write(&self, out: &mut Vec<u8>, _version: i16) -> Result<(), ValueError> {
        out.extend_from_slice(self.as_bytes());
        Ok(())
    }
    fn read(r: &mut Reader<'_>, _version: i16) -> Result<Self, ValueError> {
        Ok(r.uuid()?)
    }
}

/// Types whose compact encoding has a null form (length prefix 0).
pub(crate) trait NullableWire: Wire {
    fn read_nullable(r: &mut Reader<'_>, version: i16) -> Result<Option<Self>, ValueError>;
}

impl Wire for String {
    fn write(&self, out: &mut Vec<u8>, _version: i16) -> Result<(), ValueError> {
        Ok(put_compact_string(out, Some(self))?)
    }
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, ValueError> {
        Self::read_nullable(r, version)?.ok_or(ValueError::Null)
    }
}

impl NullableWire for String {
    fn read_nullable(r: &mut Reader<'_>, _version: i16) -> Result<Option<Self>, ValueError> {
        Ok(r.compact_string()?)
    }
}

impl Wire for Bytes {
    fn write(&self, out: &mut Vec<u8>, _version: i16) -> Result<(), ValueError> {
        put_compact_bytes(out, Some(self));
        Ok(())
    }
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, ValueError> {
        Self::read_nullable(r, version)?.ok_or(ValueError::Null)
    }
}

impl NullableWire for Bytes {
    fn read_nullable(r: &mut Reader<'_>, _version: i16) -> Result<Option<Self>, ValueError> {
        Ok(r.compact_bytes()?.map(Bytes::copy_from_slice))
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn write(&self, out: &mut Vec<u8>, version: i16) -> Result<(), ValueError> {
        put_compact_len(out, Some(self.len()));
        self.iter().try_for_each(|item| item.write(out, version))
    }
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, ValueError> {
        Self::read_nullable(r, version)?.ok_or(ValueError::Null)
    }
}

impl<T: Wire> NullableWire for Vec<T> {
    fn read_nullable(r: &mut Reader<'_>, version: i16) -> Result<Option<Self>, ValueError> {
        // compact_array_len bounds the count by the bytes left, so this allocation is safe.
        match r.compact_array_len()? {
            None => Ok(None),
            Some(n) => {
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(T::read(r, version)?);
                }
                Ok(Some(items))
            }
        }
    }
}

/// A struct field's Rust type: either a [`Wire`] value or `Option` of a [`NullableWire`].
/// `nullable` says whether the version allows null.
pub(crate) trait FieldValue: Sized + PartialEq {
    fn write_value(
        &self,
        out: &mut Vec<u8>,
        version: i16,
        nullable: bool,
    ) -> Result<(), ValueError>;
    fn read_value(r: &mut Reader<'_>, version: i16, nullable: bool) -> Result<Self, ValueError>;
}

macro_rules! plain_field_value {
    ($($ty:ty),*) => {$(
        impl FieldValue for $ty {
            fn write_value(&self, out: &mut Vec<u8>, version: i16, _nullable: bool) -> Result<(), ValueError> {
                self.write(out, version)
            }
            fn read_value(r: &mut Reader<'_>, version: i16, _nullable: bool) -> Result<Self, ValueError> {
                Self::read(r, version)
            }
        }
    )*};
}
plain_field_value!(i8, i16, u16, i32, i64, f64, bool, Uuid, String, Bytes);

impl<T: Wire + PartialEq> FieldValue for Vec<T> {
    fn write_value(
        &self,
        out: &mut Vec<u8>,
        version: i16,
        _nullable: bool,
    ) -> Result<(), ValueError> {
        self.write(out, version)
    }
    fn read_value(r: &mut Reader<'_>, version: i16, _nullable: bool) -> Result<Self, ValueError> {
        Self::read(r, version)
    }
}

impl<T: NullableWire + PartialEq> FieldValue for Option<T> {
    fn write_value(
        &self,
        out: &mut Vec<u8>,
        version: i16,
        nullable: bool,
    ) -> Result<(), ValueError> {
        match self {
            Some(v) => v.write(out, version),
            None if nullable => {
                put_uvarint(out, 0);
                Ok(())
            }
            None => Err(ValueError::Null),
        }
    }
    fn read_value(r: &mut Reader<'_>, version: i16, nullable: bool) -> Result<Self, ValueError> {
        match T::read_nullable(r, version)? {
            None if !nullable => Err(ValueError::Null),
            other => Ok(other),
        }
    }
}

fn attach(spec: &FieldSpec, version: i16, e: ValueError) -> RecordError {
    match e {
        ValueError::Null => RecordError::NullNotAllowed {
            field: spec.name,
            version,
        },
        ValueError::Read(r) => spec.malformed(r),
        ValueError::Nested(inner) => *inner,
    }
}

/// Writes one field at `version`: inline if present and untagged; into `tagged` if tagged and
/// non-default; nothing if absent, provided it holds its default.
pub(crate) fn write_field<T: FieldValue>(
    spec: &FieldSpec,
    value: &T,
    default: &T,
    version: i16,
    out: &mut Vec<u8>,
    tagged: &mut Vec<(u32, Vec<u8>)>,
) -> Result<(), RecordError> {
    if !spec.present(version) {
        if value != default {
            return Err(RecordError::NonDefaultAtVersion {
                field: spec.name,
                version,
            });
        }
        return Ok(());
    }
    let nullable = spec.nullable_at(version);
    match spec.tagged_at(version) {
        None => value
            .write_value(out, version, nullable)
            .map_err(|e| attach(spec, version, e)),
        Some(tag) => {
            if value != default {
                let mut data = Vec::new();
                value
                    .write_value(&mut data, version, nullable)
                    .map_err(|e| attach(spec, version, e))?;
                tagged.push((tag, data));
            }
            Ok(())
        }
    }
}

/// Reads one untagged field if the version has it; otherwise returns `default` (tagged
/// fields are filled in by [`read_tagged_field`]).
pub(crate) fn read_field<T: FieldValue>(
    spec: &FieldSpec,
    r: &mut Reader<'_>,
    version: i16,
    default: T,
) -> Result<T, RecordError> {
    if !spec.present(version) || spec.tagged_at(version).is_some() {
        return Ok(default);
    }
    T::read_value(r, version, spec.nullable_at(version)).map_err(|e| attach(spec, version, e))
}

/// Whether `tag` is this field's tag (at any version).
pub(crate) fn has_tag(spec: &FieldSpec, tag: u32) -> bool {
    spec.tagged.is_some_and(|(_, t)| t == tag)
}

/// Decodes a tagged field's data, which must be consumed exactly. Errors when the field is
/// not tagged at this version (Java: "Tag N is not valid for version V").
pub(crate) fn read_tagged_field<T: FieldValue>(
    spec: &FieldSpec,
    tag: u32,
    data: &[u8],
    version: i16,
) -> Result<T, RecordError> {
    if spec.tagged_at(version).is_none() {
        return Err(RecordError::TagNotValid { tag, version });
    }
    let mut r = Reader::new(data);
    let value = T::read_value(&mut r, version, spec.nullable_at(version))
        .map_err(|e| attach(spec, version, e))?;
    if r.remaining() != 0 {
        return Err(spec.malformed(ReadError::Malformed("tagged field longer than its value")));
    }
    Ok(value)
}

/// Writes the tagged-field section: known non-default tags merged with the unknown ones in
/// ascending tag order (Java's `RawTaggedFieldWriter` interleaving). An unknown tag equal to a
/// known tag of the struct is refused: it would be read back as the known field.
pub(crate) fn write_tagged_section(
    out: &mut Vec<u8>,
    mut known: Vec<(u32, Vec<u8>)>,
    unknown: &BTreeMap<i32, Bytes>,
    known_tags: &[u32],
) -> Result<(), RecordError> {
    for &tag in unknown.keys() {
        if known_tags.contains(&(tag as u32)) {
            return Err(RecordError::UnknownTagCollision { tag: tag as u32 });
        }
    }
    known.sort_by_key(|(tag, _)| *tag);
    let mut unknown: Vec<(u32, &Bytes)> = unknown.iter().map(|(t, d)| (*t as u32, d)).collect();
    unknown.sort_by_key(|(tag, _)| *tag);
    put_uvarint(out, (known.len() + unknown.len()) as u32);
    let (mut k, mut u) = (known.iter().peekable(), unknown.iter().peekable());
    loop {
        let take_known = match (k.peek(), u.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((kt, _)), Some((ut, _))) => kt < ut,
        };
        if take_known {
            let (tag, data) = k.next().expect("peeked");
            put_tagged_field(out, *tag, data);
        } else {
            let (tag, data) = u.next().expect("peeked");
            put_tagged_field(out, *tag, data);
        }
    }
    Ok(())
}

/// Reads a struct's tagged-field section, handing known tags to `known` (which returns
/// `Ok(false)` for tags it does not own) and keeping the rest. A repeated unknown tag is
/// refused (Java would keep both; no Kafka writer produces it).
pub(crate) fn read_tagged_section(
    r: &mut Reader<'_>,
    mut known: impl FnMut(u32, &[u8]) -> Result<bool, RecordError>,
) -> Result<BTreeMap<i32, Bytes>, RecordError> {
    let fields = r.tagged_fields().map_err(|e| RecordError::Malformed {
        field: "_tagged_fields",
        reason: e,
    })?;
    let mut unknown = BTreeMap::new();
    for (tag, data) in fields {
        if !known(tag, data)?
            && unknown
                .insert(tag as i32, Bytes::copy_from_slice(data))
                .is_some()
        {
            return Err(RecordError::DuplicateTag { tag });
        }
    }
    Ok(unknown)
}

/// Declares a metadata record or nested struct: the Rust struct (plus
/// `unknown_tagged_fields`), `Default` from the JSON defaults, and its [`Wire`] codec.
///
/// ```text
/// message! {
///     /// docs
///     #[derive(Eq)]
///     pub struct Name {
///         /// docs
///         field: Type = default, versions 0.. [nullable 0..] [tagged 0.. tag 3];
///     }
/// }
/// ```
macro_rules! message {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty = $default:expr, versions $min:literal ..
                    $(, nullable $nmin:literal ..)?
                    $(, tagged $tmin:literal .. tag $tag:literal)? ;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// Tagged fields this version of kraftwerk does not know, kept so that decoding
            /// and re-encoding reproduces the input bytes.
            pub unknown_tagged_fields: ::std::collections::BTreeMap<i32, ::bytes::Bytes>,
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $( $field: $default, )*
                    unknown_tagged_fields: ::std::collections::BTreeMap::new(),
                }
            }
        }

        impl $name {
            #[allow(dead_code)]
            const KNOWN_TAGS: &'static [u32] = &[$( $( $tag, )? )*];
        }

        impl $crate::metadata::wire::Wire for $name {
            #[allow(unused_variables, unused_mut)]
            fn write(&self, out: &mut Vec<u8>, version: i16)
                -> Result<(), $crate::metadata::wire::ValueError>
            {
                let defaults = $name::default();
                let mut tagged = Vec::new();
                $(
                    $crate::metadata::wire::write_field(
                        &$crate::metadata::wire::message!(@spec $field, $min $(, nullable $nmin)? $(, tagged $tmin, $tag)?),
                        &self.$field, &defaults.$field, version, out, &mut tagged)?;
                )*
                $crate::metadata::wire::write_tagged_section(
                    out, tagged, &self.unknown_tagged_fields, Self::KNOWN_TAGS)?;
                Ok(())
            }

            #[allow(unused_variables, unused_mut)]
            fn read(r: &mut $crate::codec::Reader<'_>, version: i16)
                -> Result<Self, $crate::metadata::wire::ValueError>
            {
                let mut m = $name::default();
                $(
                    m.$field = $crate::metadata::wire::read_field(
                        &$crate::metadata::wire::message!(@spec $field, $min $(, nullable $nmin)? $(, tagged $tmin, $tag)?),
                        r, version, m.$field)?;
                )*
                m.unknown_tagged_fields = $crate::metadata::wire::read_tagged_section(r, |tag, data| {
                    $(
                        let spec = $crate::metadata::wire::message!(@spec $field, $min $(, nullable $nmin)? $(, tagged $tmin, $tag)?);
                        if $crate::metadata::wire::has_tag(&spec, tag) {
                            m.$field = $crate::metadata::wire::read_tagged_field(&spec, tag, data, version)?;
                            return Ok(true);
                        }
                    )*
                    Ok(false)
                })?;
                Ok(m)
            }
        }

        #[cfg(test)]
        impl $crate::metadata::testing::RandomValue for $name {
            #[allow(unused_variables)]
            fn random(rng: &mut $crate::metadata::testing::Rng, version: i16) -> Self {
                let mut m = $name::default();
                $(
                    let spec = $crate::metadata::wire::message!(@spec $field, $min $(, nullable $nmin)? $(, tagged $tmin, $tag)?);
                    m.$field = $crate::metadata::testing::random_field(rng, &spec, version, m.$field);
                )*
                m.unknown_tagged_fields = $crate::metadata::testing::random_unknown_tags(rng);
                m
            }
        }
    };

    (@spec $field:ident, $min:literal $(, nullable $nmin:literal)? $(, tagged $tmin:literal, $tag:literal)?) => {
        $crate::metadata::wire::FieldSpec {
            name: stringify!($field),
            min_version: $min,
            nullable_min: $crate::metadata::wire::message!(@opt $($nmin)?),
            tagged: $crate::metadata::wire::message!(@opt $(($tmin, $tag))?),
        }
    };
    (@opt) => { None };
    (@opt $v:expr) => { Some($v) };
}

pub(crate) use message;
