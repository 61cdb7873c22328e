//! Delegation tokens (KIP-48) in the `secure` scenario: every controller and broker has the same
//! `delegation.token.secret.key`. admin creates a token through a broker (`kafka-delegation-tokens
//! --create`, forwarded to the active controller), `--describe` lists it, a client logs in with
//! it (SCRAM-SHA-512, `tokenauth=true`: user name the token id, password its HMAC) on a broker's
//! INTERNAL listener as admin and lists topics, admin renews it, expires it now, and the token
//! no longer logs in.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::env::Env;
use crate::kafka::args;
use crate::procs::Captured;
use crate::util;

/// `delegation.token.secret.key` of the controllers and the brokers.
pub const TOKEN_SECRET: &str = "it-delegation-token-secret";

/// `--describe` of admin's tokens. The owner must be named: without `--owner-principal` the
/// 4.1.2 tool sends an empty owner list, which brokers answer with no token at all
/// (`DescribeDelegationTokenRequest.ownersListEmpty`), whatever it prints ("for current user").
const DESCRIBE: &[&str] = &["--describe", "--owner-principal", "User:admin"];

/// How long a token may take to reach the brokers' token caches.
const PROPAGATION: Duration = Duration::from_secs(20);

/// `kafka-delegation-tokens --bootstrap-server <internal> --command-config <admin> <rest>`.
fn tokens_tool(env: &Env, internal: &str, admin: &Path, rest: &[&str]) -> Result<Captured> {
    let mut a = args(&[
        "--bootstrap-server",
        internal,
        "--command-config",
        &admin.to_string_lossy(),
    ]);
    a.extend(rest.iter().map(|s| s.to_string()));
    env.tool("kafka-delegation-tokens", &a, None, Duration::from_secs(60))
}

fn ok(r: Captured, what: &str) -> Result<Captured> {
    if !r.ok() {
        bail!(
            "{what} failed (exit {:?}): {}",
            r.code,
            util::one_line(&format!("{}\n{}", r.stderr, r.stdout), 600)
        );
    }
    Ok(r)
}

/// The (token id, HMAC) of the table row `kafka-delegation-tokens` prints for a token (columns
/// TOKENID, HMAC, OWNER, ...), the first row under the header.
fn token_row(stdout: &str) -> Option<(String, String, String)> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("TOKENID"));
    lines.next()?;
    let row = lines.find(|l| !l.trim().is_empty() && !l.starts_with('-'))?;
    let mut cols = row.split_whitespace();
    Some((
        cols.next()?.to_owned(),
        cols.next()?.to_owned(),
        cols.next()?.to_owned(),
    ))
}

/// A SASL_PLAINTEXT SCRAM-SHA-512 client config logging in with a token.
fn token_client_config(dir: &Path, token_id: &str, hmac: &str) -> Result<PathBuf> {
    let text = format!(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"{token_id}\" password=\"{hmac}\" tokenauth=\"true\";\n\
         request.timeout.ms=5000\ndefault.api.timeout.ms=10000\n"
    );
    let path = dir.join("token-client.properties");
    std::fs::write(&path, text)?;
    Ok(path)
}

fn list_topics(env: &Env, internal: &str, conf: &Path) -> Result<Captured> {
    let a = args(&[
        "--bootstrap-server",
        internal,
        "--command-config",
        &conf.to_string_lossy(),
        "--list",
    ]);
    env.tool("kafka-topics", &a, None, Duration::from_secs(30))
}

fn is_authentication_failure(r: &Captured) -> bool {
    let text = format!("{}\n{}", r.stdout, r.stderr);
    text.contains("SaslAuthenticationException") || text.contains("Authentication failed")
}

/// The whole check (see the module docs). `internal` are the brokers' INTERNAL listeners,
/// `admin` admin's `--command-config` for them, `topic` a topic that exists.
pub fn delegation_tokens(
    env: &Env,
    internal: &str,
    admin: &Path,
    dir: &Path,
    topic: &str,
) -> Result<()> {
    let r = ok(
        tokens_tool(
            env,
            internal,
            admin,
            &[
                "--create",
                "--max-life-time-period",
                "-1",
                "--renewer-principal",
                "User:alice",
            ],
        )?,
        "kafka-delegation-tokens --create",
    )?;
    let Some((token_id, hmac, owner)) = token_row(&r.stdout) else {
        bail!(
            "kafka-delegation-tokens --create printed no token: {}",
            util::one_line(&r.stdout, 600)
        );
    };
    if owner != "User:admin" {
        bail!("the token's owner is {owner}, not User:admin");
    }
    env.step(&format!(
        "admin created delegation token {token_id} through a broker (owner {owner}, renewer \
         User:alice)"
    ));

    let deadline = Instant::now() + PROPAGATION;
    loop {
        let r = ok(
            tokens_tool(env, internal, admin, DESCRIBE)?,
            "kafka-delegation-tokens --describe",
        )?;
        if r.stdout.contains(&token_id) && r.stdout.contains("User:alice") {
            env.show("kafka-delegation-tokens --describe", &r.stdout);
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "kafka-delegation-tokens --describe does not list {token_id}: {}",
                util::one_line(&r.stdout, 600)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }

    let conf = token_client_config(dir, &token_id, &hmac)?;
    let deadline = Instant::now() + PROPAGATION;
    loop {
        let r = list_topics(env, internal, &conf)?;
        if r.ok() && r.stdout.contains(topic) {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "kafka-topics --list with the token (tokenauth=true) failed (exit {:?}): {}",
                r.code,
                util::one_line(&format!("{}\n{}", r.stderr, r.stdout), 600)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    env.step(&format!(
        "a client logged in with the token (SCRAM-SHA-512, tokenauth=true) as admin and listed \
         topics ({topic} among them)"
    ));

    let r = ok(
        tokens_tool(
            env,
            internal,
            admin,
            &["--renew", "--renew-time-period", "-1", "--hmac", &hmac],
        )?,
        "kafka-delegation-tokens --renew",
    )?;
    env.step(&format!(
        "admin renewed the token: {}",
        util::one_line(&r.stdout, 200)
    ));
    let r = ok(
        tokens_tool(
            env,
            internal,
            admin,
            &["--expire", "--expiry-time-period", "-1", "--hmac", &hmac],
        )?,
        "kafka-delegation-tokens --expire",
    )?;
    env.step(&format!(
        "admin expired the token now: {}",
        util::one_line(&r.stdout, 200)
    ));

    let deadline = Instant::now() + PROPAGATION;
    loop {
        let r = list_topics(env, internal, &conf)?;
        if !r.ok() && is_authentication_failure(&r) {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "the expired token still logs in (exit {:?}): {}",
                r.code,
                util::one_line(&format!("{}\n{}", r.stderr, r.stdout), 600)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    let r = ok(
        tokens_tool(env, internal, admin, DESCRIBE)?,
        "kafka-delegation-tokens --describe",
    )?;
    if r.stdout.contains(&token_id) {
        bail!(
            "kafka-delegation-tokens --describe still lists the expired token: {}",
            util::one_line(&r.stdout, 600)
        );
    }
    env.step("the expired token no longer logs in, and --describe no longer lists it");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_row_is_read_from_the_tools_table() {
        let out = "Calling create token operation with renewers :[User:alice] , \
                   max-life-time-period :-1\nCreated delegation token with tokenId : abc\n\
                   TOKENID         HMAC                           OWNER           REQUESTER\n\
                   -------------------------------------------------------------\n\
                   abc             aGVsbG8=                       User:admin      User:admin\n";
        assert_eq!(
            token_row(out),
            Some(("abc".into(), "aGVsbG8=".into(), "User:admin".into()))
        );
        assert_eq!(token_row("nothing"), None);
    }
}
