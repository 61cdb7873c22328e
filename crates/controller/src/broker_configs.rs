//! The broker-level configs a Kafka 4.1.2 node knows (`KafkaConfig.configDef`): name, value
//! type, and whether it can be changed dynamically (`DynamicBrokerConfig.AllDynamicConfigs`),
//! plus their synonyms (`DynamicBrokerConfig.brokerConfigSynonyms`). The table was printed from
//! the 4.1.2 jars; it is data, not code.
//!
//! Used by DescribeConfigs for BROKER resources: a config whose type is unknown or PASSWORD is
//! sensitive (its value is never returned, `KafkaConfig.maybeSensitive`), a config that is not
//! dynamic is read-only.

/// A config's value type (`ConfigDef.Type`), with the id DescribeConfigs v3+ reports
/// (`DescribeConfigsResponse.ConfigType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerConfigType {
    /// `BOOLEAN` (1).
    Boolean,
    /// `STRING` (2).
    String,
    /// `INT` (3).
    Int,
    /// `SHORT` (4).
    Short,
    /// `LONG` (5).
    Long,
    /// `DOUBLE` (6).
    Double,
    /// `LIST` (7).
    List,
    /// `CLASS` (8).
    Class,
    /// `PASSWORD` (9).
    Password,
}

impl BrokerConfigType {
    /// The `DescribeConfigsResponse.ConfigType` id.
    pub fn id(self) -> i8 {
        match self {
            BrokerConfigType::Boolean => 1,
            BrokerConfigType::String => 2,
            BrokerConfigType::Int => 3,
            BrokerConfigType::Short => 4,
            BrokerConfigType::Long => 5,
            BrokerConfigType::Double => 6,
            BrokerConfigType::List => 7,
            BrokerConfigType::Class => 8,
            BrokerConfigType::Password => 9,
        }
    }
}

use BrokerConfigType as T;

/// `(name, type, dynamic, default)` of every config of `KafkaConfig` 4.1.2, sorted by name.
const BROKER_CONFIGS: &[(&str, BrokerConfigType, bool, Option<&str>)] = &[
    ("add.partitions.to.txn.retry.backoff.max.ms", T::Int, false, Some("100")),
    ("add.partitions.to.txn.retry.backoff.ms", T::Int, false, Some("20")),
    ("advertised.listeners", T::String, false, None),
    ("alter.config.policy.class.name", T::Class, false, None),
    ("alter.log.dirs.replication.quota.window.num", T::Int, false, Some("11")),
    ("alter.log.dirs.replication.quota.window.size.seconds", T::Int, false, Some("1")),
    ("authorizer.class.name", T::String, false, Some("")),
    ("auto.create.topics.enable", T::Boolean, false, Some("true")),
    ("auto.leader.rebalance.enable", T::Boolean, false, Some("true")),
    ("background.threads", T::Int, true, Some("10")),
    ("broker.heartbeat.interval.ms", T::Int, false, Some("2000")),
    ("broker.id", T::Int, false, Some("-1")),
    ("broker.rack", T::String, false, None),
    ("broker.session.timeout.ms", T::Int, false, Some("9000")),
    ("client.quota.callback.class", T::Class, false, None),
    ("compression.gzip.level", T::Int, true, Some("-1")),
    ("compression.lz4.level", T::Int, true, Some("9")),
    ("compression.type", T::String, true, Some("producer")),
    ("compression.zstd.level", T::Int, true, Some("3")),
    ("connection.failed.authentication.delay.ms", T::Int, false, Some("100")),
    ("connections.max.idle.ms", T::Long, false, Some("600000")),
    ("connections.max.reauth.ms", T::Long, false, Some("0")),
    ("controlled.shutdown.enable", T::Boolean, false, Some("true")),
    ("controller.listener.names", T::String, false, None),
    ("controller.performance.always.log.threshold.ms", T::Long, false, Some("2000")),
    ("controller.performance.sample.period.ms", T::Long, false, Some("60000")),
    ("controller.quorum.append.linger.ms", T::Int, false, Some("25")),
    ("controller.quorum.bootstrap.servers", T::List, false, Some("")),
    ("controller.quorum.election.backoff.max.ms", T::Int, false, Some("1000")),
    ("controller.quorum.election.timeout.ms", T::Int, false, Some("1000")),
    ("controller.quorum.fetch.timeout.ms", T::Int, false, Some("2000")),
    ("controller.quorum.request.timeout.ms", T::Int, false, Some("2000")),
    ("controller.quorum.retry.backoff.ms", T::Int, false, Some("20")),
    ("controller.quorum.voters", T::List, false, Some("")),
    ("controller.quota.window.num", T::Int, false, Some("11")),
    ("controller.quota.window.size.seconds", T::Int, false, Some("1")),
    ("controller.socket.timeout.ms", T::Int, false, Some("30000")),
    ("create.topic.policy.class.name", T::Class, false, None),
    ("default.replication.factor", T::Int, false, Some("1")),
    ("delegation.token.expiry.check.interval.ms", T::Long, false, Some("3600000")),
    ("delegation.token.expiry.time.ms", T::Long, false, Some("86400000")),
    ("delegation.token.max.lifetime.ms", T::Long, false, Some("604800000")),
    ("delegation.token.secret.key", T::Password, false, None),
    ("delete.records.purgatory.purge.interval.requests", T::Int, false, Some("1")),
    ("delete.topic.enable", T::Boolean, false, Some("true")),
    ("early.start.listeners", T::String, false, None),
    ("fetch.max.bytes", T::Int, false, Some("57671680")),
    ("fetch.purgatory.purge.interval.requests", T::Int, false, Some("1000")),
    ("group.consumer.assignors", T::List, false, Some("uniform,range")),
    ("group.consumer.heartbeat.interval.ms", T::Int, false, Some("5000")),
    ("group.consumer.max.heartbeat.interval.ms", T::Int, false, Some("15000")),
    ("group.consumer.max.session.timeout.ms", T::Int, false, Some("60000")),
    ("group.consumer.max.size", T::Int, false, Some("2147483647")),
    ("group.consumer.migration.policy", T::String, false, Some("bidirectional")),
    ("group.consumer.min.heartbeat.interval.ms", T::Int, false, Some("5000")),
    ("group.consumer.min.session.timeout.ms", T::Int, false, Some("45000")),
    ("group.consumer.regex.refresh.interval.ms", T::Int, false, Some("600000")),
    ("group.consumer.session.timeout.ms", T::Int, false, Some("45000")),
    ("group.coordinator.append.linger.ms", T::Int, false, Some("5")),
    ("group.coordinator.rebalance.protocols", T::List, false, Some("classic,consumer,streams")),
    ("group.coordinator.threads", T::Int, false, Some("4")),
    ("group.initial.rebalance.delay.ms", T::Int, false, Some("3000")),
    ("group.max.session.timeout.ms", T::Int, false, Some("1800000")),
    ("group.max.size", T::Int, false, Some("2147483647")),
    ("group.min.session.timeout.ms", T::Int, false, Some("6000")),
    ("group.share.assignors", T::List, false, Some("simple")),
    ("group.share.delivery.count.limit", T::Int, false, Some("5")),
    ("group.share.enable", T::Boolean, false, Some("false")),
    ("group.share.heartbeat.interval.ms", T::Int, false, Some("5000")),
    ("group.share.max.heartbeat.interval.ms", T::Int, false, Some("15000")),
    ("group.share.max.record.lock.duration.ms", T::Int, false, Some("60000")),
    ("group.share.max.session.timeout.ms", T::Int, false, Some("60000")),
    ("group.share.max.share.sessions", T::Int, false, Some("2000")),
    ("group.share.max.size", T::Int, false, Some("200")),
    ("group.share.min.heartbeat.interval.ms", T::Int, false, Some("5000")),
    ("group.share.min.record.lock.duration.ms", T::Int, false, Some("15000")),
    ("group.share.min.session.timeout.ms", T::Int, false, Some("45000")),
    ("group.share.partition.max.record.locks", T::Int, false, Some("2000")),
    ("group.share.persister.class.name", T::String, false, Some("org.apache.kafka.server.share.persister.DefaultStatePersister")),
    ("group.share.record.lock.duration.ms", T::Int, false, Some("30000")),
    ("group.share.session.timeout.ms", T::Int, false, Some("45000")),
    ("group.streams.heartbeat.interval.ms", T::Int, false, Some("5000")),
    ("group.streams.max.heartbeat.interval.ms", T::Int, false, Some("15000")),
    ("group.streams.max.session.timeout.ms", T::Int, false, Some("60000")),
    ("group.streams.max.size", T::Int, false, Some("2147483647")),
    ("group.streams.max.standby.replicas", T::Int, false, Some("2")),
    ("group.streams.min.heartbeat.interval.ms", T::Int, false, Some("5000")),
    ("group.streams.min.session.timeout.ms", T::Int, false, Some("45000")),
    ("group.streams.num.standby.replicas", T::Int, false, Some("0")),
    ("group.streams.session.timeout.ms", T::Int, false, Some("45000")),
    ("initial.broker.registration.timeout.ms", T::Int, false, Some("60000")),
    ("inter.broker.listener.name", T::String, false, None),
    ("internal.metadata.delete.delay.millis", T::Long, false, Some("60000")),
    ("internal.metadata.log.segment.bytes", T::Int, false, None),
    ("internal.metadata.max.batch.size.in.bytes", T::Int, false, Some("8388608")),
    ("internal.metadata.max.fetch.size.in.bytes", T::Int, false, Some("8388608")),
    ("kafka.metrics.polling.interval.secs", T::Int, false, Some("10")),
    ("kafka.metrics.reporters", T::List, false, Some("")),
    ("leader.imbalance.check.interval.seconds", T::Long, false, Some("300")),
    ("listener.security.protocol.map", T::String, true, Some("SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT")),
    ("listeners", T::String, true, Some("PLAINTEXT://:9092")),
    ("log.cleaner.backoff.ms", T::Long, true, Some("15000")),
    ("log.cleaner.dedupe.buffer.size", T::Long, true, Some("134217728")),
    ("log.cleaner.delete.retention.ms", T::Long, true, Some("86400000")),
    ("log.cleaner.enable", T::Boolean, false, Some("true")),
    ("log.cleaner.io.buffer.load.factor", T::Double, true, Some("0.9")),
    ("log.cleaner.io.buffer.size", T::Int, true, Some("524288")),
    ("log.cleaner.io.max.bytes.per.second", T::Double, true, Some("1.7976931348623157E308")),
    ("log.cleaner.max.compaction.lag.ms", T::Long, true, Some("9223372036854775807")),
    ("log.cleaner.min.cleanable.ratio", T::Double, true, Some("0.5")),
    ("log.cleaner.min.compaction.lag.ms", T::Long, true, Some("0")),
    ("log.cleaner.threads", T::Int, true, Some("1")),
    ("log.cleanup.policy", T::List, true, Some("delete")),
    ("log.dir", T::String, false, Some("/tmp/kafka-logs")),
    ("log.dir.failure.timeout.ms", T::Long, false, Some("30000")),
    ("log.dirs", T::String, false, None),
    ("log.flush.interval.messages", T::Long, true, Some("9223372036854775807")),
    ("log.flush.interval.ms", T::Long, true, None),
    ("log.flush.offset.checkpoint.interval.ms", T::Int, false, Some("60000")),
    ("log.flush.scheduler.interval.ms", T::Long, false, Some("9223372036854775807")),
    ("log.flush.start.offset.checkpoint.interval.ms", T::Int, false, Some("60000")),
    ("log.index.interval.bytes", T::Int, true, Some("4096")),
    ("log.index.size.max.bytes", T::Int, true, Some("10485760")),
    ("log.initial.task.delay.ms", T::Long, false, Some("30000")),
    ("log.local.retention.bytes", T::Long, true, Some("-2")),
    ("log.local.retention.ms", T::Long, true, Some("-2")),
    ("log.message.timestamp.after.max.ms", T::Long, true, Some("3600000")),
    ("log.message.timestamp.before.max.ms", T::Long, true, Some("9223372036854775807")),
    ("log.message.timestamp.type", T::String, true, Some("CreateTime")),
    ("log.preallocate", T::Boolean, true, Some("false")),
    ("log.retention.bytes", T::Long, true, Some("-1")),
    ("log.retention.check.interval.ms", T::Long, false, Some("300000")),
    ("log.retention.hours", T::Int, false, Some("168")),
    ("log.retention.minutes", T::Int, false, None),
    ("log.retention.ms", T::Long, true, None),
    ("log.roll.hours", T::Int, false, Some("168")),
    ("log.roll.jitter.hours", T::Int, false, Some("0")),
    ("log.roll.jitter.ms", T::Long, true, None),
    ("log.roll.ms", T::Long, true, None),
    ("log.segment.bytes", T::Int, true, Some("1073741824")),
    ("log.segment.delete.delay.ms", T::Long, true, Some("60000")),
    ("max.connection.creation.rate", T::Int, true, Some("2147483647")),
    ("max.connections", T::Int, true, Some("2147483647")),
    ("max.connections.per.ip", T::Int, true, Some("2147483647")),
    ("max.connections.per.ip.overrides", T::String, true, Some("")),
    ("max.incremental.fetch.session.cache.slots", T::Int, false, Some("1000")),
    ("max.request.partition.size.limit", T::Int, false, Some("2000")),
    ("message.max.bytes", T::Int, true, Some("1048588")),
    ("metadata.log.dir", T::String, false, None),
    ("metadata.log.max.record.bytes.between.snapshots", T::Long, false, Some("20971520")),
    ("metadata.log.max.snapshot.interval.ms", T::Long, false, Some("3600000")),
    ("metadata.log.segment.bytes", T::Int, false, Some("1073741824")),
    ("metadata.log.segment.ms", T::Long, false, Some("604800000")),
    ("metadata.max.idle.interval.ms", T::Int, false, Some("500")),
    ("metadata.max.retention.bytes", T::Long, false, Some("104857600")),
    ("metadata.max.retention.ms", T::Long, false, Some("604800000")),
    ("metric.reporters", T::List, true, Some("org.apache.kafka.common.metrics.JmxReporter")),
    ("metrics.num.samples", T::Int, false, Some("2")),
    ("metrics.recording.level", T::String, false, Some("INFO")),
    ("metrics.sample.window.ms", T::Long, false, Some("30000")),
    ("min.insync.replicas", T::Int, true, Some("1")),
    ("node.id", T::Int, false, None),
    ("num.io.threads", T::Int, true, Some("8")),
    ("num.network.threads", T::Int, true, Some("3")),
    ("num.partitions", T::Int, false, Some("1")),
    ("num.recovery.threads.per.data.dir", T::Int, true, Some("2")),
    ("num.replica.alter.log.dirs.threads", T::Int, false, None),
    ("num.replica.fetchers", T::Int, true, Some("1")),
    ("offset.metadata.max.bytes", T::Int, false, Some("4096")),
    ("offsets.commit.timeout.ms", T::Int, false, Some("5000")),
    ("offsets.load.buffer.size", T::Int, false, Some("5242880")),
    ("offsets.retention.check.interval.ms", T::Long, false, Some("600000")),
    ("offsets.retention.minutes", T::Int, false, Some("10080")),
    ("offsets.topic.compression.codec", T::Int, false, Some("0")),
    ("offsets.topic.num.partitions", T::Int, false, Some("50")),
    ("offsets.topic.replication.factor", T::Short, false, Some("3")),
    ("offsets.topic.segment.bytes", T::Int, false, Some("104857600")),
    ("principal.builder.class", T::Class, true, Some("org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder")),
    ("process.roles", T::List, false, None),
    ("producer.id.expiration.check.interval.ms", T::Int, false, Some("600000")),
    ("producer.id.expiration.ms", T::Int, true, Some("86400000")),
    ("producer.purgatory.purge.interval.requests", T::Int, false, Some("1000")),
    ("queued.max.request.bytes", T::Long, false, Some("-1")),
    ("queued.max.requests", T::Int, false, Some("500")),
    ("quota.window.num", T::Int, false, Some("11")),
    ("quota.window.size.seconds", T::Int, false, Some("1")),
    ("remote.fetch.max.wait.ms", T::Int, true, Some("500")),
    ("remote.list.offsets.request.timeout.ms", T::Long, true, Some("30000")),
    ("remote.log.index.file.cache.total.size.bytes", T::Long, true, Some("1073741824")),
    ("remote.log.manager.copier.thread.pool.size", T::Int, true, Some("10")),
    ("remote.log.manager.copy.max.bytes.per.second", T::Long, true, Some("9223372036854775807")),
    ("remote.log.manager.copy.quota.window.num", T::Int, false, Some("11")),
    ("remote.log.manager.copy.quota.window.size.seconds", T::Int, false, Some("1")),
    ("remote.log.manager.expiration.thread.pool.size", T::Int, true, Some("10")),
    ("remote.log.manager.fetch.max.bytes.per.second", T::Long, true, Some("9223372036854775807")),
    ("remote.log.manager.fetch.quota.window.num", T::Int, false, Some("11")),
    ("remote.log.manager.fetch.quota.window.size.seconds", T::Int, false, Some("1")),
    ("remote.log.manager.task.interval.ms", T::Long, false, Some("30000")),
    ("remote.log.manager.task.retry.backoff.max.ms", T::Long, false, Some("30000")),
    ("remote.log.manager.task.retry.backoff.ms", T::Long, false, Some("500")),
    ("remote.log.manager.task.retry.jitter", T::Double, false, Some("0.2")),
    ("remote.log.manager.thread.pool.size", T::Int, false, Some("2")),
    ("remote.log.metadata.custom.metadata.max.bytes", T::Int, false, Some("128")),
    ("remote.log.metadata.manager.class.name", T::String, false, Some("org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager")),
    ("remote.log.metadata.manager.class.path", T::String, false, None),
    ("remote.log.metadata.manager.impl.prefix", T::String, false, Some("rlmm.config.")),
    ("remote.log.metadata.manager.listener.name", T::String, false, None),
    ("remote.log.reader.max.pending.tasks", T::Int, false, Some("100")),
    ("remote.log.reader.threads", T::Int, true, Some("10")),
    ("remote.log.storage.manager.class.name", T::String, false, None),
    ("remote.log.storage.manager.class.path", T::String, false, None),
    ("remote.log.storage.manager.impl.prefix", T::String, false, Some("rsm.config.")),
    ("remote.log.storage.system.enable", T::Boolean, false, Some("false")),
    ("replica.fetch.backoff.ms", T::Int, false, Some("1000")),
    ("replica.fetch.max.bytes", T::Int, false, Some("1048576")),
    ("replica.fetch.min.bytes", T::Int, false, Some("1")),
    ("replica.fetch.response.max.bytes", T::Int, false, Some("10485760")),
    ("replica.fetch.wait.max.ms", T::Int, false, Some("500")),
    ("replica.high.watermark.checkpoint.interval.ms", T::Long, false, Some("5000")),
    ("replica.lag.time.max.ms", T::Long, false, Some("30000")),
    ("replica.selector.class", T::String, false, None),
    ("replica.socket.receive.buffer.bytes", T::Int, false, Some("65536")),
    ("replica.socket.timeout.ms", T::Int, false, Some("30000")),
    ("replication.quota.window.num", T::Int, false, Some("11")),
    ("replication.quota.window.size.seconds", T::Int, false, Some("1")),
    ("request.timeout.ms", T::Int, false, Some("30000")),
    ("sasl.client.callback.handler.class", T::Class, false, None),
    ("sasl.enabled.mechanisms", T::List, true, Some("GSSAPI")),
    ("sasl.jaas.config", T::Password, true, None),
    ("sasl.kerberos.kinit.cmd", T::String, true, Some("/usr/bin/kinit")),
    ("sasl.kerberos.min.time.before.relogin", T::Long, true, Some("60000")),
    ("sasl.kerberos.principal.to.local.rules", T::List, true, Some("DEFAULT")),
    ("sasl.kerberos.service.name", T::String, true, None),
    ("sasl.kerberos.ticket.renew.jitter", T::Double, true, Some("0.05")),
    ("sasl.kerberos.ticket.renew.window.factor", T::Double, true, Some("0.8")),
    ("sasl.login.callback.handler.class", T::Class, false, None),
    ("sasl.login.class", T::Class, false, None),
    ("sasl.login.connect.timeout.ms", T::Int, false, None),
    ("sasl.login.read.timeout.ms", T::Int, false, None),
    ("sasl.login.refresh.buffer.seconds", T::Short, true, Some("300")),
    ("sasl.login.refresh.min.period.seconds", T::Short, true, Some("60")),
    ("sasl.login.refresh.window.factor", T::Double, true, Some("0.8")),
    ("sasl.login.refresh.window.jitter", T::Double, true, Some("0.05")),
    ("sasl.login.retry.backoff.max.ms", T::Long, false, Some("10000")),
    ("sasl.login.retry.backoff.ms", T::Long, false, Some("100")),
    ("sasl.mechanism.controller.protocol", T::String, false, Some("GSSAPI")),
    ("sasl.mechanism.inter.broker.protocol", T::String, true, Some("GSSAPI")),
    ("sasl.oauthbearer.assertion.algorithm", T::String, false, Some("RS256")),
    ("sasl.oauthbearer.assertion.claim.aud", T::String, false, None),
    ("sasl.oauthbearer.assertion.claim.exp.seconds", T::Int, false, Some("300")),
    ("sasl.oauthbearer.assertion.claim.iss", T::String, false, None),
    ("sasl.oauthbearer.assertion.claim.jti.include", T::Boolean, false, Some("false")),
    ("sasl.oauthbearer.assertion.claim.nbf.seconds", T::Int, false, Some("60")),
    ("sasl.oauthbearer.assertion.claim.sub", T::String, false, None),
    ("sasl.oauthbearer.assertion.file", T::String, false, None),
    ("sasl.oauthbearer.assertion.private.key.file", T::String, false, None),
    ("sasl.oauthbearer.assertion.private.key.passphrase", T::Password, false, None),
    ("sasl.oauthbearer.assertion.template.file", T::String, false, None),
    ("sasl.oauthbearer.client.credentials.client.id", T::String, false, None),
    ("sasl.oauthbearer.client.credentials.client.secret", T::Password, false, None),
    ("sasl.oauthbearer.clock.skew.seconds", T::Int, false, Some("30")),
    ("sasl.oauthbearer.expected.audience", T::List, false, None),
    ("sasl.oauthbearer.expected.issuer", T::String, false, None),
    ("sasl.oauthbearer.jwks.endpoint.refresh.ms", T::Long, false, Some("3600000")),
    ("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", T::Long, false, Some("10000")),
    ("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", T::Long, false, Some("100")),
    ("sasl.oauthbearer.jwks.endpoint.url", T::String, false, None),
    ("sasl.oauthbearer.jwt.retriever.class", T::Class, false, Some("org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever")),
    ("sasl.oauthbearer.jwt.validator.class", T::Class, false, Some("org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator")),
    ("sasl.oauthbearer.scope", T::String, false, None),
    ("sasl.oauthbearer.scope.claim.name", T::String, false, Some("scope")),
    ("sasl.oauthbearer.sub.claim.name", T::String, false, Some("sub")),
    ("sasl.oauthbearer.token.endpoint.url", T::String, false, None),
    ("sasl.server.callback.handler.class", T::Class, false, None),
    ("sasl.server.max.receive.size", T::Int, false, Some("524288")),
    ("security.inter.broker.protocol", T::String, false, Some("PLAINTEXT")),
    ("security.providers", T::String, false, None),
    ("server.max.startup.time.ms", T::Long, false, Some("9223372036854775807")),
    ("share.coordinator.append.linger.ms", T::Int, false, Some("5")),
    ("share.coordinator.cold.partition.snapshot.interval.ms", T::Int, false, Some("300000")),
    ("share.coordinator.load.buffer.size", T::Int, false, Some("5242880")),
    ("share.coordinator.snapshot.update.records.per.snapshot", T::Int, false, Some("500")),
    ("share.coordinator.state.topic.compression.codec", T::Int, false, Some("0")),
    ("share.coordinator.state.topic.min.isr", T::Short, false, Some("2")),
    ("share.coordinator.state.topic.num.partitions", T::Int, false, Some("50")),
    ("share.coordinator.state.topic.prune.interval.ms", T::Int, false, Some("300000")),
    ("share.coordinator.state.topic.replication.factor", T::Short, false, Some("3")),
    ("share.coordinator.state.topic.segment.bytes", T::Int, false, Some("104857600")),
    ("share.coordinator.threads", T::Int, false, Some("1")),
    ("share.coordinator.write.timeout.ms", T::Int, false, Some("5000")),
    ("share.fetch.purgatory.purge.interval.requests", T::Int, false, Some("1000")),
    ("socket.connection.setup.timeout.max.ms", T::Long, false, Some("30000")),
    ("socket.connection.setup.timeout.ms", T::Long, false, Some("10000")),
    ("socket.listen.backlog.size", T::Int, false, Some("50")),
    ("socket.receive.buffer.bytes", T::Int, false, Some("102400")),
    ("socket.request.max.bytes", T::Int, false, Some("104857600")),
    ("socket.send.buffer.bytes", T::Int, false, Some("102400")),
    ("ssl.allow.dn.changes", T::Boolean, false, Some("false")),
    ("ssl.allow.san.changes", T::Boolean, false, Some("false")),
    ("ssl.cipher.suites", T::List, true, Some("")),
    ("ssl.client.auth", T::String, true, Some("none")),
    ("ssl.enabled.protocols", T::List, true, Some("TLSv1.2,TLSv1.3")),
    ("ssl.endpoint.identification.algorithm", T::String, true, Some("https")),
    ("ssl.engine.factory.class", T::Class, true, None),
    ("ssl.key.password", T::Password, true, None),
    ("ssl.keymanager.algorithm", T::String, true, Some("SunX509")),
    ("ssl.keystore.certificate.chain", T::Password, true, None),
    ("ssl.keystore.key", T::Password, true, None),
    ("ssl.keystore.location", T::String, true, None),
    ("ssl.keystore.password", T::Password, true, None),
    ("ssl.keystore.type", T::String, true, Some("JKS")),
    ("ssl.principal.mapping.rules", T::String, false, Some("DEFAULT")),
    ("ssl.protocol", T::String, true, Some("TLSv1.3")),
    ("ssl.provider", T::String, true, None),
    ("ssl.secure.random.implementation", T::String, true, None),
    ("ssl.trustmanager.algorithm", T::String, true, Some("PKIX")),
    ("ssl.truststore.certificates", T::Password, true, None),
    ("ssl.truststore.location", T::String, true, None),
    ("ssl.truststore.password", T::Password, true, None),
    ("ssl.truststore.type", T::String, true, Some("JKS")),
    ("telemetry.max.bytes", T::Int, false, Some("1048576")),
    ("transaction.abort.timed.out.transaction.cleanup.interval.ms", T::Int, false, Some("10000")),
    ("transaction.max.timeout.ms", T::Int, false, Some("900000")),
    ("transaction.partition.verification.enable", T::Boolean, true, Some("true")),
    ("transaction.remove.expired.transaction.cleanup.interval.ms", T::Int, false, Some("3600000")),
    ("transaction.state.log.load.buffer.size", T::Int, false, Some("5242880")),
    ("transaction.state.log.min.isr", T::Int, false, Some("2")),
    ("transaction.state.log.num.partitions", T::Int, false, Some("50")),
    ("transaction.state.log.replication.factor", T::Short, false, Some("3")),
    ("transaction.state.log.segment.bytes", T::Int, false, Some("104857600")),
    ("transaction.two.phase.commit.enable", T::Boolean, false, Some("false")),
    ("transactional.id.expiration.ms", T::Int, false, Some("604800000")),
    ("unclean.leader.election.enable", T::Boolean, true, Some("false")),
    ("unclean.leader.election.interval.ms", T::Long, false, Some("300000")),
    ("unstable.api.versions.enable", T::Boolean, false, Some("false")),
    ("unstable.feature.versions.enable", T::Boolean, false, Some("false")),
];

/// The `listener.name.<listener>.` prefix of per-listener overrides.
fn listener_override_base(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("listener.name.")?;
    let dot = rest.find('.')?;
    Some(&rest[dot + 1..])
}

/// Configs set per listener and SASL mechanism (`listener.name.<l>.<mechanism>.<config>`).
const LISTENER_MECHANISM_CONFIGS: [&str; 5] = [
    "sasl.jaas.config",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
];

/// `DynamicBrokerConfig.brokerConfigSynonyms(name, matchListenerOverride = true)`: the names
/// that can set `name`, most specific first (e.g. `log.retention.ms`, `log.retention.minutes`,
/// `log.retention.hours`; a listener override, then its base config).
pub fn broker_config_synonyms(name: &str) -> Vec<String> {
    let group: &[&str] = match name {
        "log.roll.ms" | "log.roll.hours" => &["log.roll.ms", "log.roll.hours"],
        "log.roll.jitter.ms" | "log.roll.jitter.hours" => {
            &["log.roll.jitter.ms", "log.roll.jitter.hours"]
        }
        "log.flush.interval.ms" => &["log.flush.interval.ms", "log.flush.scheduler.interval.ms"],
        "log.retention.ms" | "log.retention.minutes" | "log.retention.hours" => &[
            "log.retention.ms",
            "log.retention.minutes",
            "log.retention.hours",
        ],
        _ => {
            return match listener_override_base(name) {
                Some(base) => {
                    let base = LISTENER_MECHANISM_CONFIGS
                        .iter()
                        .find(|m| base.ends_with(*m))
                        .copied()
                        .unwrap_or(base);
                    vec![name.to_owned(), base.to_owned()]
                }
                None => vec![name.to_owned()],
            }
        }
    };
    group.iter().map(|s| (*s).to_owned()).collect()
}

type Row = (&'static str, BrokerConfigType, bool, Option<&'static str>);

fn lookup(name: &str) -> Option<&'static Row> {
    BROKER_CONFIGS
        .binary_search_by(|(n, _, _, _)| (*n).cmp(name))
        .ok()
        .map(|i| &BROKER_CONFIGS[i])
}

/// `KafkaConfig.configType`: the type of `name`, or of the first of its synonyms that has one
/// (so listener overrides get their base config's type); `None` for unknown configs.
pub fn broker_config_type(name: &str) -> Option<BrokerConfigType> {
    lookup(name).map(|(_, t, _, _)| *t).or_else(|| {
        broker_config_synonyms(name)
            .iter()
            .find_map(|s| lookup(s).map(|(_, t, _, _)| *t))
    })
}

/// Whether `name` is in `DynamicBrokerConfig.AllDynamicConfigs` (exact name).
pub fn is_dynamic_broker_config(name: &str) -> bool {
    lookup(name).is_some_and(|(_, _, dynamic, _)| *dynamic)
}

/// Kafka's built-in default of `name` as `ConfigDef.convertToString` prints it (the value a
/// `DEFAULT_CONFIG` synonym carries); `None` for unknown configs and those without a default.
pub fn broker_config_default(name: &str) -> Option<&'static str> {
    lookup(name).and_then(|(_, _, _, default)| *default)
}

/// `KafkaConfig.maybeSensitive`: unknown and PASSWORD configs never show their value.
pub fn is_sensitive_broker_config(name: &str) -> bool {
    broker_config_type(name).is_none_or(|t| t == BrokerConfigType::Password)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_complete() {
        assert!(BROKER_CONFIGS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(broker_config_default("log.retention.hours"), Some("168"));
        assert_eq!(broker_config_default("log.retention.ms"), None);
        assert_eq!(broker_config_default("min.insync.replicas"), Some("1"));
        // Counts printed from the 4.1.2 jars: 336 configs, 90 of them dynamic.
        assert_eq!(BROKER_CONFIGS.len(), 336);
        assert_eq!(BROKER_CONFIGS.iter().filter(|c| c.2).count(), 90);
        assert_eq!(BROKER_CONFIGS.iter().filter(|c| c.3.is_none()).count(), 59);
    }

    #[test]
    fn types_synonyms_and_sensitivity_follow_kafka() {
        // Printed by Kafka 4.1.2's DynamicBrokerConfig.brokerConfigSynonyms / KafkaConfig.configType.
        assert_eq!(
            broker_config_synonyms("log.retention.hours"),
            [
                "log.retention.ms",
                "log.retention.minutes",
                "log.retention.hours"
            ]
        );
        assert_eq!(
            broker_config_synonyms("listener.name.sasl_ssl.plain.sasl.jaas.config"),
            [
                "listener.name.sasl_ssl.plain.sasl.jaas.config",
                "sasl.jaas.config"
            ]
        );
        assert_eq!(
            broker_config_synonyms("listener.name.plaintext.ssl.keystore.location"),
            [
                "listener.name.plaintext.ssl.keystore.location",
                "ssl.keystore.location"
            ]
        );
        assert_eq!(broker_config_type("log.retention.hours"), Some(T::Int));
        assert_eq!(
            broker_config_type("listener.name.sasl_ssl.plain.sasl.jaas.config"),
            Some(T::Password)
        );
        assert_eq!(
            broker_config_type("listener.name.x.connections.max.reauth.ms"),
            Some(T::Long)
        );
        assert!(is_sensitive_broker_config("no.such.config"));
        assert!(is_sensitive_broker_config("ssl.keystore.password"));
        assert!(!is_sensitive_broker_config("min.insync.replicas"));
        assert!(is_dynamic_broker_config("log.cleaner.threads"));
        assert!(!is_dynamic_broker_config("log.dirs"));
    }
}
