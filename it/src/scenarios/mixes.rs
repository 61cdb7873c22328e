//! Scenarios that run once per controller mix (`dynamic-mixed`, `secure-mixed`): the mixes
//! from an environment variable, and the node directories of the mixes before set aside.

use anyhow::{bail, Result};

use crate::env::{parse_controllers, ControllerKind, Env};

/// The mixes in `var` (`;`-separated controller lists such as `java,kraftwerk,kraftwerk`), or
/// in `default` when it is unset or empty; each mix has 3 controllers.
pub fn from_env(var: &str, default: &str) -> Result<Vec<Vec<ControllerKind>>> {
    let spec = std::env::var(var)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.into());
    parse(var, &spec)
}

/// [`from_env`]'s parser; `var` names the source in errors.
fn parse(var: &str, spec: &str) -> Result<Vec<Vec<ControllerKind>>> {
    let mixes: Vec<Vec<ControllerKind>> = spec
        .split(';')
        .filter(|m| !m.trim().is_empty())
        .map(|m| {
            let k = parse_controllers(m)?;
            if k.len() != 3 {
                bail!("{var}: each mix has 3 controllers, '{m}' has {}", k.len());
            }
            Ok(k)
        })
        .collect::<Result<_>>()?;
    if mixes.is_empty() {
        bail!("{var}: no mix in '{spec}'");
    }
    Ok(mixes)
}

/// Moves the node directories of the mixes before (`controller-N`, `broker-N`, all stopped)
/// into `mix-<i>/`: the next mix formats directories of the same names, and a kept one would
/// hold the other cluster's `meta.properties`.
pub fn set_aside_nodes(env: &Env, i: usize) -> Result<()> {
    let dest = env.work.join(format!("mix-{i}"));
    std::fs::create_dir_all(&dest)?;
    for entry in std::fs::read_dir(&env.work)? {
        let entry = entry?;
        let name = entry.file_name();
        let n = name.to_string_lossy();
        if n.starts_with("controller-") || n.starts_with("broker-") {
            std::fs::rename(entry.path(), dest.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_are_three_controllers_each() {
        let m = parse("X", "java,kraftwerk,kraftwerk;j,j,k").unwrap();
        assert_eq!(
            m,
            vec![
                vec![
                    ControllerKind::Java,
                    ControllerKind::Kraftwerk,
                    ControllerKind::Kraftwerk
                ],
                vec![
                    ControllerKind::Java,
                    ControllerKind::Java,
                    ControllerKind::Kraftwerk
                ],
            ]
        );
        let e = parse("X", "java,kraftwerk").unwrap_err().to_string();
        assert!(e.contains("each mix has 3 controllers"), "{e}");
        assert!(parse("X", ";").is_err());
    }
}
