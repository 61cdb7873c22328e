//! Kafka's UUID conventions: reserved topic ids, the reserved directory ids of KIP-858, the
//! base64 text form, and random topic-id generation from a seeded RNG.

use rand::RngCore;
use uuid::Uuid;

/// `Uuid.ZERO_UUID`: also `DirectoryId.MIGRATING`, the directory of a replica whose assignment
/// predates JBOD support (a v0 record or an empty Directories list).
pub const ZERO_UUID: Uuid = Uuid::from_u64_pair(0, 0);

pub use kraftwerk_protocol::constants::METADATA_TOPIC_ID;
pub use kraftwerk_protocol::kafka_uuid::{
    is_reserved_directory_id as is_reserved_directory_uuid, DIRECTORY_LOST, DIRECTORY_MIGRATING,
    DIRECTORY_UNASSIGNED,
};

/// `DirectoryId.reserved` for a borrowed id.
pub fn is_reserved_directory(dir: &Uuid) -> bool {
    is_reserved_directory_uuid(*dir)
}

/// `DirectoryId.isOnline`: UNASSIGNED and MIGRATING count as online, LOST never does; any other
/// directory is online if the broker registered no directories at all or lists it.
pub fn is_directory_online(dir: &Uuid, online_dirs: &[Uuid]) -> bool {
    if *dir == DIRECTORY_UNASSIGNED || *dir == DIRECTORY_MIGRATING {
        return true;
    }
    if *dir == DIRECTORY_LOST {
        return false;
    }
    online_dirs.is_empty() || online_dirs.contains(dir)
}

/// A random topic id as `Uuid.randomUuid` makes one: a version-4 UUID that is neither
/// [`ZERO_UUID`] nor [`METADATA_TOPIC_ID`] and whose text form does not start with '-'
/// (such ids confuse command-line tools). `rng` is the controller's seeded RNG.
pub fn random_topic_id(rng: &mut impl RngCore) -> Uuid {
    loop {
        let mut bytes = [0u8; 16];
        rng.fill_bytes(&mut bytes);
        let id = uuid::Builder::from_random_bytes(bytes).into_uuid();
        // The first base64 character encodes the top 6 bits of byte 0; '-' is index 62.
        let starts_with_dash = bytes_first_sextet(&id) == 62;
        if id != ZERO_UUID && id != METADATA_TOPIC_ID && !starts_with_dash {
            return id;
        }
    }
}

fn bytes_first_sextet(id: &Uuid) -> u8 {
    id.as_bytes()[0] >> 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use kraftwerk_protocol::kafka_uuid::kafka_uuid_to_string;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn kafka_string_matches_java_for_metadata_topic_id() {
        // Uuid.METADATA_TOPIC_ID.toString() in Java prints this value (`org.apache.kafka.common.Uuid.METADATA_TOPIC_ID`).
        assert_eq!(
            kafka_uuid_to_string(METADATA_TOPIC_ID),
            "AAAAAAAAAAAAAAAAAAAAAQ"
        );
    }

    #[test]
    fn random_topic_ids_avoid_reserved_values_and_leading_dash() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..20_000 {
            let id = random_topic_id(&mut rng);
            assert_ne!(id, ZERO_UUID);
            assert_ne!(id, METADATA_TOPIC_ID);
            assert!(!kafka_uuid_to_string(id).starts_with('-'), "{id}");
        }
    }

    #[test]
    fn reserved_directories() {
        assert!(is_reserved_directory(&DIRECTORY_UNASSIGNED));
        assert!(is_reserved_directory(&DIRECTORY_LOST));
        assert!(is_reserved_directory(&Uuid::from_u64_pair(0, 99)));
        assert!(!is_reserved_directory(&Uuid::from_u64_pair(0, 100)));
        assert!(!is_reserved_directory(&Uuid::from_u64_pair(1, 0)));
    }

    #[test]
    fn directory_online_rules() {
        let d1 = Uuid::from_u64_pair(5, 5);
        let d2 = Uuid::from_u64_pair(6, 6);
        assert!(is_directory_online(&DIRECTORY_UNASSIGNED, &[d1]));
        assert!(!is_directory_online(&DIRECTORY_LOST, &[]));
        assert!(is_directory_online(&d2, &[]));
        assert!(is_directory_online(&d1, &[d1]));
        assert!(!is_directory_online(&d2, &[d1]));
    }
}
