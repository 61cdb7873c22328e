//! Tests of `scram.rs`, after Kafka's `ScramParserTest`.
use super::*;

/// `ScramParserTest.TEST_SALT`, and its base64 text.
const TEST_SALT: &[u8] = b"1lv4pdnw4fwq7notcxm0yy1k7q";
const TEST_SALT_B64: &str = "MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=";
/// `ScramParserTest.TEST_SALTED_PASSWORD` as base64.
const TEST_SALTED_PASSWORD_B64: &str = "mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=";

fn err(argument: &str) -> String {
    ScramCredentialArg::parse(argument)
        .and_then(|a| a.to_record().map(|_| a))
        .unwrap_err()
        .to_string()
}

#[test]
fn parses_name_and_password() {
    let arg =
        ScramCredentialArg::parse(" SCRAM-SHA-512=[name=scram-admin,password=scram-user-secret] ")
            .unwrap();
    assert_eq!(
        arg,
        ScramCredentialArg {
            mechanism: ScramMechanism::Sha512,
            name: "scram-admin".into(),
            salt: None,
            iterations: None,
            password: Some("scram-user-secret".into()),
            salted_password: None,
        }
    );
}

#[test]
fn quoted_values_salt_and_iterations() {
    let arg = ScramCredentialArg::parse(&format!(
        "SCRAM-SHA-256=[name=\"bob\",password=my pass,iterations=8192,salt=\"{TEST_SALT_B64}\"]"
    ))
    .unwrap();
    assert_eq!(arg.name, "bob");
    assert_eq!(arg.password.as_deref(), Some("my pass"));
    assert_eq!(arg.iterations, Some(8192));
    assert_eq!(arg.salt.as_deref(), Some(TEST_SALT));
    // Java's basic decoder: padding optional.
    let unpadded = ScramCredentialArg::parse(
        "SCRAM-SHA-256=[name=bob,password=p,salt=MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E]",
    )
    .unwrap();
    assert_eq!(unpadded.salt.as_deref(), Some(TEST_SALT));
    // Empty and quoted-empty values; a lone quote stays.
    let arg = ScramCredentialArg::parse("SCRAM-SHA-256=[name=\"\",password=\"]").unwrap();
    assert_eq!(
        (arg.name.as_str(), arg.password.as_deref()),
        ("", Some("\""))
    );
    // A repeated key keeps its last value; trailing commas are dropped as Java's split does.
    let arg = ScramCredentialArg::parse("SCRAM-SHA-256=[name=a,name=b,password=p,,]").unwrap();
    assert_eq!(arg.name, "b");
}

#[test]
fn password_wins_over_salted_password() {
    let arg = ScramCredentialArg::parse(&format!(
        "SCRAM-SHA-256=[name=a,password=p,saltedpassword={TEST_SALTED_PASSWORD_B64}]"
    ))
    .unwrap();
    assert_eq!(arg.password.as_deref(), Some("p"));
    assert_eq!(arg.salted_password, None);
}

#[test]
fn kafkas_messages() {
    let cases: &[(&str, &str)] = &[
        ("SCRAM-SHA-512", "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-512'"),
        (
            "SCRAM-SHA-UNSUPPORTED=[name=scram-admin,password=scram-user-secret]",
            "The add-scram mechanism SCRAM-SHA-UNSUPPORTED is not supported.",
        ),
        (
            "scram-sha-512=[name=a,password=b]",
            "The add-scram mechanism scram-sha-512 is not supported.",
        ),
        (
            "SCRAM-SHA-256=name=scram-admin,password=scram-user-secret",
            "Expected configuration string to start with [",
        ),
        (
            "SCRAM-SHA-256=[name=scram-admin,password=scram-user-secret",
            "Expected configuration string to end with ]",
        ),
        ("SCRAM-SHA-256=[name]", "No equals sign found in SCRAM component: name"),
        ("SCRAM-SHA-256=[]", "No equals sign found in SCRAM component: "),
        ("SCRAM-SHA-256=[,]", "You must supply 'name' to add-scram"),
        ("SCRAM-SHA-256=[password=mypass]", "You must supply 'name' to add-scram"),
        (
            "SCRAM-SHA-256=[name=bar]",
            "You must supply one of 'password' or 'saltedpassword' to add-scram",
        ),
        (
            "SCRAM-SHA-256=[name=bob,password=mypass,unknown=something,unknown2=somethingelse]",
            "Unknown SCRAM configurations: unknown, unknown2",
        ),
        (
            // Keys are not trimmed.
            "SCRAM-SHA-256=[name=bob, password=mypass]",
            "You must supply one of 'password' or 'saltedpassword' to add-scram",
        ),
        (
            "SCRAM-SHA-256=[name=alice,saltedpassword=\"mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=\"]",
            "You must supply 'salt' with 'saltedpassword' to add-scram",
        ),
        ("SCRAM-SHA-256=[name=a,password=p,salt=!!]", "Failed to decode given salt: !!"),
        (
            "SCRAM-SHA-256=[name=a,salt=QQ==,saltedpassword=%]",
            "Failed to decode given saltedPassword: %",
        ),
        (
            "SCRAM-SHA-256=[name=a,password=p,iterations=lots]",
            "Failed to parse iterations count: lots",
        ),
        (
            "SCRAM-SHA-256=[name=a,password=p,iterations=4095]",
            "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256",
        ),
        (
            "SCRAM-SHA-512=[name=a,password=p,iterations=16385]",
            "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512",
        ),
    ];
    for (argument, message) in cases {
        assert_eq!(err(argument), *message, "{argument}");
    }
}

#[test]
fn refused_before_3_5_iv2() {
    let args = vec!["SCRAM-SHA-256=[name=a,password=p]".to_owned()];
    assert_eq!(
        scram_records(&args, MetadataVersion::V3_5_IV1)
            .unwrap_err()
            .to_string(),
        "SCRAM is only supported in metadata.version 3.5-IV2 or later."
    );
    assert_eq!(
        scram_records(&args, MetadataVersion::V3_5_IV2)
            .unwrap()
            .len(),
        1
    );
    assert!(scram_records(&[], MetadataVersion::MINIMUM)
        .unwrap()
        .is_empty());
}

#[test]
fn random_salt_is_base36_of_130_bits() {
    let a = random_salt();
    let b = random_salt();
    assert_ne!(a, b);
    for salt in [a, b] {
        assert!(!salt.is_empty() && salt.len() <= 26, "{salt:?}");
        assert!(salt
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));
    }
    let mut max = [0xffu8; 17];
    max[0] = 0b11;
    // 2^130 - 1 in base 36 (BigInteger.toString(36)).
    assert_eq!(base36(max), b"1omfro7zwmumr3umxudzyj6scf".to_vec());
    assert_eq!(base36([0; 17]), b"0".to_vec());
    let mut small = [0u8; 17];
    small[16] = 71;
    assert_eq!(base36(small), b"1z".to_vec());
}

/// `ScramParserTest.testPerMechanismDataToRecord`: the keys of Kafka's test salted password.
#[test]
fn record_from_salted_password() {
    let arg = ScramCredentialArg::parse(&format!(
        "SCRAM-SHA-512=[name=alice,salt=\"{TEST_SALT_B64}\",saltedpassword=\"{TEST_SALTED_PASSWORD_B64}\"]"
    ))
    .unwrap();
    let record = arg.to_record().unwrap();
    let salted = JAVA_BASE64.decode(TEST_SALTED_PASSWORD_B64).unwrap();
    let (stored, server) = scram_keys(SCRAM_SHA_512, &salted).unwrap();
    assert_eq!(record.name, "alice");
    assert_eq!(record.mechanism, 2);
    assert_eq!(&record.salt[..], TEST_SALT);
    assert_eq!(record.iterations, 4096);
    assert_eq!(
        (&record.stored_key[..], &record.server_key[..]),
        (&stored[..], &server[..])
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hi() and the keys equal what Kafka 4.1.2's `ScramFormatter` computes (printed by jshell with
/// kafka-clients-4.1.2.jar: `saltedPassword`, `storedKey(clientKey(..))`, `serverKey`), for
/// both mechanisms.
#[test]
fn keys_match_kafkas_scram_formatter() {
    let cases = [
        (
            format!("SCRAM-SHA-512=[name=alice,password=alice-secret,iterations=8192,salt={TEST_SALT_B64}]"),
            "e3b381c24facd09ec1d2092f2d32e7e92f13c44fc4e269a79a7e6ceaf1cac07bc16f0d49277be3677f0db56f305e899d30357055519a4cc58f3c1298098fb1bf",
            "df7ed4c784e16515913f390b3753e63e99590e7a0e849d050cf0a049feae6c47b96928d80cc04a620442101c69944f4d9a1ff04eccc600dd273b30ba6587de30",
            "2d1ec654bdf89f8075e45457c1b921d8731a5c9765eb1b8b5835bbeeb77618c12cc89cf9d4673d91b7bd3d148d042358839a0c594d0ff84ee744a87c12372f2d",
        ),
        (
            format!("SCRAM-SHA-256=[name=bob,password=bob-secret,salt=\"{TEST_SALT_B64}\"]"),
            "841e650066031eb2680cb93a8b62b79adc9f48e1414a753ac3293d1bd51e59c5",
            "99453af2ef14d7a23bf0844c6b229f1465efc84e3af8606cb88ded142b693c19",
            "9619cba1a9642cc0339d5acfa2f38b66a450a2f86215953c7e8e073ef17d3c07",
        ),
    ];
    for (argument, salted, stored, server) in cases {
        let arg = ScramCredentialArg::parse(&argument).unwrap();
        let iterations = arg.iterations.unwrap_or(DEFAULT_ITERATIONS).unsigned_abs();
        let ours = salted_password(
            arg.mechanism,
            arg.password.as_deref().unwrap(),
            TEST_SALT,
            iterations,
        );
        assert_eq!(hex(&ours), salted, "{argument}");
        let record = arg.to_record().unwrap();
        assert_eq!(hex(&record.stored_key), stored, "{argument}");
        assert_eq!(hex(&record.server_key), server, "{argument}");
    }
}
