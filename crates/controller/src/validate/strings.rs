//! Kafka's string limit: a STRING or COMPACT_STRING holds at most `Short.MAX_VALUE` (32,767)
//! bytes of UTF-8 (`protocol/types/Type.java`; the generated `read` methods throw "string field
//! X had invalid length N", the generated `write`/`addSize` methods "'X' field is too long to
//! be serialized"). The limit counts UTF-8 bytes: 16,384 two-byte characters are 32,768 bytes
//! and too long, though they are only 16,384 UTF-16 units.

use kafka_protocol::error::ResponseError;

use crate::error::ApiError;

/// Longest string, in UTF-8 bytes, a Kafka message or metadata record can carry.
pub const MAX_STRING_BYTES: usize = kraftwerk_records::codec::MAX_STRING_BYTES;

/// Whether `value` fits a STRING / COMPACT_STRING.
pub fn fits(value: &str) -> bool {
    value.len() <= MAX_STRING_BYTES
}

/// The error Java's generated reader gives a string over the limit (the request cannot be
/// decoded): INVALID_REQUEST "string field `field` had invalid length `len`".
pub fn too_long(field: &str, len: usize) -> ApiError {
    ApiError::new(
        ResponseError::InvalidRequest,
        format!("string field {field} had invalid length {len}"),
    )
}

/// Walks the string fields of a request and keeps the first one over the limit. Each request
/// type lists its fields in `ControllerApi::check_strings`, in wire order.
#[derive(Debug, Default)]
pub struct StringCheck {
    error: Option<ApiError>,
}

impl StringCheck {
    /// A check with nothing found yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks one string field (`name` as Kafka's JSON schema spells it).
    pub fn field(&mut self, name: &str, value: &str) -> &mut Self {
        if self.error.is_none() && !fits(value) {
            self.error = Some(too_long(name, value.len()));
        }
        self
    }

    /// Checks a nullable string field.
    pub fn optional(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        match value {
            Some(value) => self.field(name, value),
            None => self,
        }
    }

    /// Checks every element of a string array field.
    pub fn each<'a>(&mut self, name: &str, values: impl IntoIterator<Item = &'a str>) -> &mut Self {
        for value in values {
            if self.error.is_some() {
                break;
            }
            self.field(name, value);
        }
        self
    }

    /// INVALID_REQUEST for the first field over the limit, if any.
    pub fn into_result(self) -> Result<(), ApiError> {
        self.error.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_counts_utf8_bytes() {
        // 'é' is 2 bytes of UTF-8 and one UTF-16 unit.
        let at_limit = format!("{}a", "é".repeat(16_383));
        let over = "é".repeat(16_384);
        assert_eq!((at_limit.len(), over.len()), (32_767, 32_768));
        assert!(fits(&at_limit));
        assert!(!fits(&over));
        let mut check = StringCheck::new();
        check.field("host", &at_limit).optional("rack", None);
        assert_eq!(check.into_result(), Ok(()));
        let mut check = StringCheck::new();
        check
            .each("name", ["ok", over.as_str(), &"x".repeat(40_000)])
            .field("host", "later");
        let error = check.into_result().unwrap_err();
        assert_eq!(error.code, ResponseError::InvalidRequest.code());
        assert_eq!(
            error.message.as_deref(),
            Some("string field name had invalid length 32768")
        );
    }
}
