//! Dynamic configurations (`ConfigurationsImage`): resource (type, name) → key → value, as
//! written by ConfigRecords.

use imbl::OrdMap;

/// `ConfigResource.Type` ids used in ConfigRecord.ResourceType.
pub mod resource_type {
    /// TOPIC.
    pub const TOPIC: i8 = 2;
    /// BROKER (name = broker id, or "" for the cluster-wide default).
    pub const BROKER: i8 = 4;
    /// BROKER_LOGGER (never stored in the log).
    pub const BROKER_LOGGER: i8 = 8;
    /// CLIENT_METRICS.
    pub const CLIENT_METRICS: i8 = 16;
    /// GROUP.
    pub const GROUP: i8 = 32;
}

/// A config resource: type id and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConfigResource {
    /// `ConfigResource.Type` id (see [`resource_type`]).
    pub resource_type: i8,
    /// Resource name ("" for cluster-wide broker defaults).
    pub name: String,
}

/// All dynamic configs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigsImage {
    resources: OrdMap<ConfigResource, OrdMap<String, String>>,
}

impl ConfigsImage {
    /// The configs of one resource.
    pub fn get(&self, resource: &ConfigResource) -> Option<&OrdMap<String, String>> {
        self.resources.get(resource)
    }

    /// One config value.
    pub fn value(&self, resource_type: i8, name: &str, key: &str) -> Option<&String> {
        self.resources
            .get(&ConfigResource {
                resource_type,
                name: name.to_owned(),
            })
            .and_then(|configs| configs.get(key))
    }

    /// All resources with at least one config.
    pub fn iter(&self) -> impl Iterator<Item = (&ConfigResource, &OrdMap<String, String>)> {
        self.resources.iter()
    }

    /// Applies a ConfigRecord: sets `key`, or removes it when `value` is `None`.
    pub fn replay(&mut self, resource: ConfigResource, key: &str, value: Option<&str>) {
        match value {
            Some(value) => {
                self.resources
                    .entry(resource)
                    .or_default()
                    .insert(key.to_owned(), value.to_owned());
            }
            None => {
                let now_empty = match self.resources.get_mut(&resource) {
                    Some(configs) => {
                        configs.remove(key);
                        configs.is_empty()
                    }
                    None => false,
                };
                if now_empty {
                    self.resources.remove(&resource);
                }
            }
        }
    }

    /// Removes every config of a topic (RemoveTopicRecord replay deletes them too).
    pub fn remove_topic(&mut self, topic_name: &str) {
        self.resources.remove(&ConfigResource {
            resource_type: resource_type::TOPIC,
            name: topic_name.to_owned(),
        });
    }
}
