//! Topic name rules (`org.apache.kafka.common.internals.Topic`): legal characters, length, and
//! the '.'/'_' collision rule (KAFKA-13743: metric names replace '.' with '_', so `a.b` and
//! `a_b` may not both exist).

/// Name of the metadata log's topic; CreateTopics silently drops it.
pub use kraftwerk_protocol::constants::METADATA_TOPIC_NAME as CLUSTER_METADATA_TOPIC_NAME;

/// Longest legal topic name (`Topic.MAX_NAME_LENGTH`).
pub const MAX_NAME_LENGTH: usize = 249;

/// `Topic.validate`: `Err` carries Kafka's exact message for INVALID_TOPIC_EXCEPTION.
pub fn validate(name: &str) -> Result<(), String> {
    let reason = if name.is_empty() {
        Some("the empty string is not allowed".to_owned())
    } else if name == "." {
        Some("'.' is not allowed".to_owned())
    } else if name == ".." {
        Some("'..' is not allowed".to_owned())
    } else if name.encode_utf16().count() > MAX_NAME_LENGTH {
        // Java measures String.length(), i.e. UTF-16 code units.
        Some(format!(
            "the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
        ))
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        Some(format!(
            "'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        ))
    } else {
        None
    };
    match reason {
        Some(reason) => Err(format!("Topic name is invalid: {reason}")),
        None => Ok(()),
    }
}

/// `Topic.hasCollisionChars`: the name contains '.' or '_'.
pub fn has_collision_chars(name: &str) -> bool {
    name.contains('.') || name.contains('_')
}

/// `Topic.unifyCollisionChars`: '.' replaced by '_'.
pub fn unify_collision_chars(name: &str) -> String {
    name.replace('.', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_names() {
        assert_eq!(validate("foo.bar_baz-1"), Ok(()));
        assert_eq!(validate(&"a".repeat(249)), Ok(()));
    }

    #[test]
    fn illegal_names_carry_kafkas_messages() {
        assert_eq!(
            validate(""),
            Err("Topic name is invalid: the empty string is not allowed".into())
        );
        assert_eq!(
            validate("."),
            Err("Topic name is invalid: '.' is not allowed".into())
        );
        assert_eq!(
            validate(".."),
            Err("Topic name is invalid: '..' is not allowed".into())
        );
        assert!(validate(&"a".repeat(250))
            .unwrap_err()
            .contains("longer than the max allowed length 249"));
        assert_eq!(
            validate("a b"),
            Err(
                "Topic name is invalid: 'a b' contains one or more characters other than ASCII \
                 alphanumerics, '.', '_' and '-'"
                    .into()
            )
        );
        assert!(validate("é").is_err());
    }

    #[test]
    fn collisions() {
        assert!(has_collision_chars("a.b"));
        assert!(has_collision_chars("a_b"));
        assert!(!has_collision_chars("ab-c"));
        assert_eq!(unify_collision_chars("a.b_c"), "a_b_c");
    }
}
