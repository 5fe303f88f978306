//! Crate-level tests: every published shape's examples, the redaction format, merging,
//! streaming at every split point, known values in every form.

use super::*;

/// Examples for the shapes that have no regex row (blocks and context shapes):
/// (id, true positive, false positive).
const CONTEXT_EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "pem-private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\nKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==\n-----END RSA PRIVATE KEY-----\n",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n",
    ),
    (
        "openssh-private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
    ),
    (
        "pgp-private-key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8dKdNnFRIBXuDL7Dx\n-----END PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBF0u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d\n-----END PGP PUBLIC KEY BLOCK-----",
    ),
    (
        "putty-private-key",
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAB3NzaC1yc2EAAAABJQAAAQEA\nPrivate-Lines: 1\nAAABAQCu8jzPde0IgxLd6GncfBAepfJBd0K\nPrivate-MAC: f9243a8f506b40928b5b7a767c76fb00\n",
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\n",
    ),
    (
        "password-assignment",
        "DB_PASSWORD=Zq8v2LkP9sXw",
        "password = \"changeme\"",
    ),
    (
        "generic-assignment",
        "api_token: \"kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy\"",
        "api_token: ${API_TOKEN}",
    ),
    (
        "provider-token",
        "cloudimage: \"d__9rvli8sm4jo18v5q0q4n7vhkwbv\"",
        "cloudimage: \"ultraPictureBox1\"",
    ),
];

#[test]
fn every_shape_example() {
    let s = Scrubber::new();
    let mut checked = 0;
    let mut failures = Vec::new();
    for rule in rules::RULES {
        let tp = s.scrub(rule.true_positive);
        if !tp.shapes().contains(&rule.id) {
            failures.push(format!(
                "{}: true positive {:?} gave {:?}",
                rule.id, rule.true_positive, tp.text
            ));
        }
        let fp = s.scrub(rule.false_positive);
        if fp.shapes().contains(&rule.id) {
            failures.push(format!(
                "{}: false positive {:?} gave {:?}",
                rule.id, rule.false_positive, fp.text
            ));
        }
        checked += 1;
    }
    for (id, tp, fp) in CONTEXT_EXAMPLES {
        let r = s.scrub(tp);
        if !r.shapes().contains(id) {
            failures.push(format!("{id}: true positive {tp:?} gave {:?}", r.text));
        }
        let r = s.scrub(fp);
        if !r.hits.is_empty() {
            failures.push(format!("{id}: false positive {fp:?} gave {:?}", r.text));
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} failing examples:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Every published shape (but the known-value one, tested below) has its examples.
    assert_eq!(checked + 1, shapes().len());
}

/// What is left of `text` once scrubbed, and whether each of `secrets` is gone from it.
fn assert_removed(text: &str, secrets: &[&str]) {
    let out = Scrubber::new().scrub(text).text;
    for s in secrets {
        assert!(!out.contains(s), "{s:?} survived in {text:?}: {out:?}");
    }
}

fn assert_untouched(text: &str) {
    let out = Scrubber::new().scrub(text).text;
    assert_eq!(out, text, "{text:?} was altered");
}

#[test]
fn the_value_of_a_name_value_pair_is_redacted_not_its_attribute() {
    // XML <add key=… value=…/>: the value goes, `value=` stays.
    let text = r#"    <add key="ClearTextPassword" value="Qv7-mercury_Lark" />"#;
    let out = Scrubber::new().scrub(text).text;
    assert_eq!(
        out,
        r#"    <add key="ClearTextPassword" value="[REDACTED:password-assignment]" />"#
    );
    assert_removed(
        r#"<add key="ApiSecret" value="t0ucan_Rv82kq" />"#,
        &["t0ucan_Rv82kq"],
    );
    // JSON name/value and key/value objects: the name is the key.
    assert_removed(
        r#"{"name": "db_password", "value": "Tangerine#58"}"#,
        &["Tangerine#58"],
    );
    assert_removed(
        r#"{"key": "client_secret", "value": "Zx81-pQm!wE2"}"#,
        &["Zx81-pQm!wE2"],
    );
    // A pair whose name is not a credential, or an attribute after its own `=`, stays.
    assert_untouched(
        r#"[{"name": "LOG_LEVEL", "value": "debug"}, {"name": "REGION", "value": "eu-west-1"}]"#,
    );
    assert_untouched(r#"<add key="PageSize" value="50" protocolVersion="3" />"#);
    assert_untouched(r#"<setting name="DB_PASSWORD" serializeAs="String" />"#);
    assert_untouched(r#"<input type="password" name="password" autocomplete="current-password">"#);
    assert_untouched(
        r#"<add key="nuget.internal" value="https://pkgs.contoso.net/v3/index.json" />"#,
    );
}

#[test]
fn keyword_assignments_with_unusual_values_and_keys_are_redacted() {
    assert_removed("password: 'open the gate 7'", &["open the gate 7"]);
    assert_removed(r#""db_pass": "let me in Qz4""#, &["let me in Qz4"]);
    assert_removed(r#"secrete = "p{4}x!Q;zR""#, &["p{4}x!Q;zR"]);
    assert_removed("my_password_super_secure=Zebra%91", &["Zebra%91"]);
    assert_removed("db_pass: k3yb0ard!!", &["k3yb0ard!!"]);
    assert_removed(r#"client_secret: "blue moon 42x""#, &["blue moon 42x"]);
    // Unquoted values full of punctuation and braces, whole.
    assert_removed("PASSWORD=a}K9{m!x#2", &["a}K9{m!x#2"]);
    assert_removed("db_pass={Xy9}zQ!w", &["Xy9}zQ!w"]);
    assert_removed("password: p@ss{w0rd}!", &["p@ss{w0rd}!"]);
    assert_removed("password=(9Kx)[zz]!q", &["(9Kx)[zz]!q"]);
    // Prose, placeholders, code: left alone.
    assert_untouched(r#"password: "must be at least twelve characters long""#);
    assert_untouched(r#"description: "rotate the key 2 times""#);
    assert_untouched("PASSWORD: shorter-version");
    assert_untouched("password = XXXXXXXXXXX");
    assert_untouched("password: abc");
    assert_untouched(r#""password": "os.getenv('PW')""#);
    assert_untouched(r#"password = getpass.getpass("Password: ")"#);
    assert_untouched("class PasswordResetTokenGenerator(TokenGeneratorBase):");
    assert_untouched("public_key: 7UFapbtrVQ8lp0v6iWVZfB1O");
    // Types, calls, references and paths after a password key are not passwords.
    for code in [
        "    password: Option<String>,",
        "password: Vec<u8>,",
        "const PASSWORD_WORDS: &[&str] = &[",
        "password: z.string().min(8),",
        "password_hash = bcrypt.hashpw(pw, salt)",
        "password=%(pw)s",
        "password: ${{ secrets.PW }}",
        "PWD=/home/user/src",
        "if password == other:",
    ] {
        assert_untouched(code);
    }
}

#[test]
fn tokens_in_an_encoding_are_redacted() {
    use base64::Engine as _;
    // A URL with credentials, JSON-escaped.
    assert_removed(
        r#"{"url": "https:\/\/svc:Pq8sLm2Xw9@db.example.com\/x"}"#,
        &["Pq8sLm2Xw9"],
    );
    assert_removed(
        r#""dsn":"mongodb+srv:\/\/app:Hq2mZ8vLx4@c0.example.net\/t""#,
        &["Hq2mZ8vLx4"],
    );
    assert_removed(
        r#"{"hook":"https:\/\/hooks.slack.com\/services\/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"}"#,
        &["Lw3kR9tPq2ZxV8mN4cJ7yB1s"],
    );
    // A JWT with no signature part: base64url of a header and a payload, then a dot.
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = b64.encode(r#"{"alg":"none","typ":"JWT"}"#);
    let payload = b64.encode(r#"{"sub":"81723","iat":1700000000}"#);
    let unsigned = format!("{header}.{payload}");
    assert_removed(&format!("id_token={unsigned}."), &[&unsigned]);
    // Basic credentials in a header: base64 of user:password.
    let basic = base64::engine::general_purpose::STANDARD.encode("jenkins:Harbor913");
    assert_removed(&format!("Authorization: Basic {basic}"), &[&basic]);
    // curl -u with the password only, or with the user from a variable; an empty user in a URL.
    assert_removed(
        "curl -u :Tk9wQ2mZpL https://api.example.com/v1",
        &["Tk9wQ2mZpL"],
    );
    assert_removed(
        "curl -s -u \"$USER:Tk9wQ2mZpL\" https://ci.example.com",
        &["Tk9wQ2mZpL"],
    );
    assert_removed("redis://:Tk9wQ2mZpL@cache.internal:6379/0", &["Tk9wQ2mZpL"]);
    assert_untouched("curl -u \"$USER:$PASSWORD\" https://ci.example.com");
    assert_untouched("https://example.com/a.b/c");
}

#[test]
fn the_published_set_is_large_and_its_ids_are_unique() {
    let all = shapes();
    assert!(all.len() >= 120, "only {} shapes", all.len());
    let mut ids: Vec<_> = all.iter().map(|s| s.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "duplicate shape ids");
    for s in all {
        assert!(
            !s.description.is_empty() && !s.description.contains('\n'),
            "{}",
            s.id
        );
        assert!(
            s.id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "id {} is not kebab-case",
            s.id
        );
    }
}

#[test]
fn redaction_replaces_only_the_secret() {
    let text = "export GITHUB_TOKEN=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 # ci\nnext line";
    let r = Scrubber::new().scrub(text);
    assert_eq!(
        r.text,
        "export GITHUB_TOKEN=[REDACTED:github-pat-classic] # ci\nnext line"
    );
    assert_eq!(r.hits.len(), 1);
    assert_eq!(
        &text[r.hits[0].start..r.hits[0].end],
        "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"
    );
    assert_eq!(r.shapes(), ["github-pat-classic"]);
}

#[test]
fn text_without_secrets_comes_through_unchanged() {
    let text = "fn main() {\n    let key = map.get(\"name\");\n    println!(\"{key}\");\n}\nThe token budget is 4096.\n";
    let r = Scrubber::new().scrub(text);
    assert_eq!(r.text, text);
    assert!(r.hits.is_empty());
}

#[test]
fn overlapping_matches_merge_into_one_redaction() {
    // The JWT is also the value of a credential assignment and of an Authorization header.
    let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    let text = format!("Authorization: Bearer {jwt}");
    let r = Scrubber::new().scrub(&text);
    assert_eq!(r.hits.len(), 1, "{:?}", r.hits);
    assert_eq!(r.text.matches("[REDACTED:").count(), 1);
    assert!(!r.text.contains(jwt));
}

#[test]
fn a_secret_repeated_on_its_line_is_redacted_everywhere() {
    let r = Scrubber::new().scrub("ipinfo token = '3ff77bb6fe6885' | '3ff77bb6fe6885'");
    assert!(!r.text.contains("3ff77bb6fe6885"), "{}", r.text);
    assert_eq!(r.hits.len(), 2);
}

#[test]
fn extended_private_keys_of_every_slip132_version_are_redacted() {
    let s = Scrubber::new();
    for key in [
        "tprv8ZgxMBicQKsPfMNJ2WqDUsPdgRYQGFu9Eei6u5gPuQYCDFPKPyR1Z38zk4GUwWEbZnQnYuf5tTmvCfuVcrvDiVF1gYn9BDHVvJs6YN4xt91",
        "yprvABrGsX5C9janttNB9xPPytMZYJA4E2KzWtB4R7vRekWGAgz2tePzsewcmzTneXFGBMpy64buY43ueeXytoXziiJcUceHeZ5vEE1iVQnkRLH",
        "zprvAWgYBBk7JR8GjyUCKdEwgFZZtHyt5mYKjtLZYa7Az3HNgcxMw7Pak8fkwGMfF2aDrdDV6k89osSaZkKgzt8vogBMYkW2jFTn8skYSjms2Fk",
        "uprv8tXDerPXZ1QsWGYCJXJwANDoANK7pcxbFpc8CsrzXnRuGK2zPREGBcS3hUp9JaMvnAitWqZpRBjSuSEDWg3ePU2VSV2SGKrCa2zKvGNnCDV",
        "vprv9DMUxX4ShgxMKxajwvEWZZMgEiSvqyt4dansXi1vAb6oRRyphPGHbAxpAHCCCyyHKk42CxgeWsaUFAnpEredMXUiKtC5pw2u5bE4Lzof6sh",
        "ZprvAhadJRUYsNgeApwstqKSDi2xwQhBaL3MaNK7srtzRoGMjHxf8QBCxGu7cF6CYakt8kB8LEcTmckzbxT4rGGpTbnW2ygAkyiDvqyBpwPyrSJ",
    ] {
        let r = s.scrub(&format!("\"{key}\""));
        assert_eq!(r.text, "\"[REDACTED:bip32-extended-private-key]\"", "{key}");
    }
    // A placeholder of the right length and alphabet is not a key.
    let filler = format!("xprv{}", "X".repeat(107));
    assert_eq!(s.scrub(&filler).text, filler);
}

#[test]
fn netrc_and_config_passwords_are_redacted_and_prose_is_not() {
    let s = Scrubber::new();
    for (text, redacted) in [
        (
            "machine api.example.org login bob password hunter",
            "machine api.example.org login bob password [REDACTED:netrc-password]",
        ),
        (
            "machine imap.example.org port 993 login bob password s3same0pen",
            "machine imap.example.org port 993 login bob password [REDACTED:netrc-password]",
        ),
        (
            "default login anonymous password guestpass",
            "default login anonymous password [REDACTED:netrc-password]",
        ),
        (
            "  password Zq8v2LkP9sXw",
            "  password [REDACTED:config-password-line]",
        ),
        ("Pass Tr0ub4dor&3", "Pass [REDACTED:config-password-line]"),
    ] {
        assert_eq!(s.scrub(text).text, redacted, "{text}");
    }
    for prose in [
        "the password is stored in the keychain",
        "Password accepted",
        "password changed",
        "every machine needs a password of its own",
        "machine example.org login bob password $NETRC_PASSWORD",
        "    pass  # nothing to do",
        "PassCmd \"pass show mail\"",
    ] {
        assert_eq!(s.scrub(prose).text, prose, "{prose}");
    }
}

#[test]
fn passwords_glued_to_dash_p_are_redacted_only_on_their_command_lines() {
    let s = Scrubber::new();
    for (text, redacted) in [
        (
            "mysql -uroot -psecretive app",
            "mysql -uroot -p[REDACTED:cli-password-flag] app",
        ),
        (
            "$ mysqldump -u backup -p'Zq8v2Lk' --all-databases",
            "$ mysqldump -u backup -p'[REDACTED:cli-password-flag]' --all-databases",
        ),
        (
            "mariadb --user=app --password=hunter22 -h db",
            "mariadb --user=app --password=[REDACTED:cli-password-flag] -h db",
        ),
        (
            "sshpass -p 'opensesame' ssh root@host",
            "sshpass -p '[REDACTED:cli-password-flag]' ssh root@host",
        ),
    ] {
        assert_eq!(s.scrub(text).text, redacted, "{text}");
    }
    for other in [
        "python -m http.server -p8080",
        "mysql -uroot -p app",
        "mysql -uroot -p$MYSQL_PWD app",
        "mkdir -p build && mysql --version",
        "ssh -p2222 host",
    ] {
        assert_eq!(s.scrub(other).text, other, "{other}");
    }
}

const STREAM_TEXT: &str = "build started\nAWS_ACCESS_KEY_ID=AKIAZDOCIS2JHTLGMXGE\npassword: Zq8v2LkP9sXw\n\
-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oYdtd8fD2WuOoAoGCCqGSM49\n-----END EC PRIVATE KEY-----\n\
slack: xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD done";

#[test]
fn streaming_gives_the_one_shot_result_at_every_split_point() {
    let s = Scrubber::new();
    let whole = s.scrub(STREAM_TEXT);
    assert_eq!(whole.hits.len(), 4, "{}", whole.text);
    for split in 0..=STREAM_TEXT.len() {
        let mut st = s.stream();
        let mut out = st.push_bytes(&STREAM_TEXT.as_bytes()[..split]);
        out.extend(st.push_bytes(&STREAM_TEXT.as_bytes()[split..]));
        out.extend(st.finish_bytes());
        assert_eq!(
            String::from_utf8_lossy(&out),
            whole.text,
            "split at {split}"
        );
        assert_eq!(st.hits(), whole.hits.as_slice(), "split at {split}");
    }
}

#[test]
fn streaming_one_byte_at_a_time_holds_back_only_the_open_line() {
    let s = Scrubber::new();
    let mut st = s.stream();
    let mut out = String::new();
    let secret = "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";
    for c in format!("token {secret}").chars() {
        out.push_str(&st.push(&c.to_string()));
        // Nothing of an unfinished line is passed on.
        assert!(out.is_empty(), "{out}");
    }
    out.push_str(&st.push("\nnext"));
    assert_eq!(out, "token [REDACTED:github-pat-classic]\n");
    assert_eq!(st.held(), 4);
    out.push_str(&st.finish());
    assert_eq!(out, "token [REDACTED:github-pat-classic]\nnext");
}

#[test]
fn streaming_a_very_long_line_is_bounded_and_matches_one_shot() {
    let s = Scrubber::new();
    let mut text = String::new();
    while text.len() < 3 * engine::MAX_LINE {
        text.push_str("lorem ipsum api_key=kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy dolor ");
    }
    let whole = s.scrub(&text);
    let mut st = s.stream();
    let mut out = String::new();
    for chunk in text.as_bytes().chunks(1000) {
        out.push_str(&String::from_utf8_lossy(&st.push_bytes(chunk)));
        assert!(st.held() <= engine::MAX_LINE + 1000);
    }
    out.push_str(&st.finish());
    assert_eq!(out, whole.text);
    assert!(!out.contains("kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy"));
}

#[test]
fn scrub_writer_scrubs_into_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("log.txt");
    let file = std::fs::File::create(&path).expect("create log");
    let mut w = Scrubber::new().writer(file);
    for piece in [
        "step 1\nnpm_u8jzPde0",
        "IgxLd6GncfBAepfJBd0Kh8oOOL8d",
        " published\nstep 2\n",
    ] {
        w.write_all(piece.as_bytes()).expect("write");
    }
    assert_eq!(w.hits().len(), 1);
    w.finish().expect("finish");
    let written = std::fs::read_to_string(&path).expect("read log");
    assert_eq!(
        written,
        "step 1\n[REDACTED:npm-access-token] published\nstep 2\n"
    );
}

#[test]
fn known_values_are_removed_in_every_form() {
    let secret = "s3cr3t/val+ue?x";
    let s = Scrubber::with_known_values([SecretValue::new(secret)]).expect("scrubber");
    use base64::Engine as _;
    let forms = [
        secret.to_owned(),
        base64::engine::general_purpose::STANDARD.encode(secret),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret),
        "s3cr3t%2Fval%2Bue%3Fx".to_owned(),
        secret.bytes().map(|b| format!("{b:02x}")).collect(),
        secret.bytes().map(|b| format!("{b:02X}")).collect(),
    ];
    for form in forms {
        let text = format!("value: <{form}> end");
        let r = s.scrub(&text);
        assert_eq!(r.text, "value: <[REDACTED:known-value]> end", "form {form}");
        assert_eq!(r.shapes(), [KNOWN_VALUE_SHAPE]);
    }
}

#[test]
fn known_values_must_not_be_tiny() {
    let err = Scrubber::with_known_values(["abc"]).expect_err("a 3-byte value is refused");
    assert!(err.to_string().contains("3 bytes"), "{err}");
}

#[test]
fn known_values_reach_the_stream_too() {
    let s = Scrubber::with_known_values(["correct horse battery"]).expect("scrubber");
    let mut st = s.stream();
    let mut out = st.push("the phrase is correct hor");
    out.push_str(&st.push("se battery\n"));
    // A line that ends in a known value is held until the next shows whether it goes on.
    assert_eq!(out, "");
    out.push_str(&st.push("next\n"));
    assert_eq!(out, "the phrase is [REDACTED:known-value]\nnext\n");
    out.push_str(&st.finish());
    assert_eq!(out, "the phrase is [REDACTED:known-value]\nnext\n");
}

/// A machine-made token as a keeper would hand it over.
const TOKEN: &str = "tK9vQ2mZ8xL4pR7wB3nC6yH1jF5sD0gA";

fn known_scrubber() -> Scrubber {
    Scrubber::with_known_values([TOKEN]).expect("scrubber")
}

/// `text` with `form` in it: the known scrubber removes all of `form`, and the scrubber
/// without known values does not (so it is the known-value path that found it).
fn assert_known_form_removed(form: &str, text: &str) {
    let plain = Scrubber::new().scrub(text);
    assert!(
        plain.text.contains(form),
        "the shapes alone already catch {text:?}"
    );
    let r = known_scrubber().scrub(text);
    assert!(!r.text.contains(form), "{form:?} survived in {:?}", r.text);
    assert_eq!(r.shapes(), [KNOWN_VALUE_SHAPE], "{text:?} → {:?}", r.text);
}

#[test]
fn known_values_are_found_in_base64_at_every_alignment() {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    for prefix in ["", "u:", "us:", "bob:", "admin:", "x", "\u{ff}?"] {
        let inner = format!("{prefix}{TOKEN}!?>");
        for encoded in [STANDARD.encode(&inner), URL_SAFE_NO_PAD.encode(&inner)] {
            assert_known_form_removed(&encoded, &format!("echo {encoded} | base64 -d"));
            let r = known_scrubber().scrub(&format!("echo {encoded} | base64 -d"));
            // The whole encoded run goes, not only its middle.
            assert_eq!(
                r.text, "echo [REDACTED:known-value] | base64 -d",
                "{prefix:?}"
            );
        }
    }
}

#[test]
fn known_values_are_found_in_base32_at_every_alignment() {
    for prefix in ["", "a", "ab", "abc", "abcd"] {
        let encoded = data_encoding::BASE32.encode(format!("{prefix}{TOKEN}").as_bytes());
        assert_known_form_removed(&encoded, &format!("otp {encoded} end"));
        let lower = encoded.to_ascii_lowercase();
        assert_known_form_removed(&lower, &format!("otp {lower} end"));
    }
}

#[test]
fn known_values_are_found_fully_percent_encoded() {
    for upper in [true, false] {
        let encoded: String = TOKEN
            .bytes()
            .map(|b| {
                if upper {
                    format!("%{b:02X}")
                } else {
                    format!("%{b:02x}")
                }
            })
            .collect();
        assert_known_form_removed(&encoded, &format!("GET /?q={encoded} HTTP/1.1"));
    }
}

#[test]
fn either_half_of_a_known_value_is_removed() {
    let (first, second) = TOKEN.split_at(TOKEN.len() / 2);
    for half in [first, second] {
        let text = format!("part: {half} end");
        let r = known_scrubber().scrub(&text);
        assert_eq!(r.text, "part: [REDACTED:known-value] end", "{half}");
    }
    // A run is extended as far as the text agrees with the value.
    let r = known_scrubber().scrub(&format!("x{}y", &TOKEN[3..29]));
    assert_eq!(r.text, "x[REDACTED:known-value]y");
    // Shorter runs are left alone, and so are values too short to have parts.
    let short = &TOKEN[..PART_LEN - 1];
    assert_eq!(known_scrubber().scrub(short).text, short);
    let s = Scrubber::with_known_values(["Zq8v2LkP9sXwT4mB7n"]).expect("scrubber");
    assert_eq!(s.scrub("Zq8v2LkP9sXw").text, "Zq8v2LkP9sXw");
}

#[test]
fn a_known_value_split_over_lines_is_removed_over_the_break() {
    let (a, b) = TOKEN.split_at(7);
    for brk in ["\n", "\r\n", "=\n", "\\\n"] {
        let text = format!("key {a}{brk}{b} done");
        let r = known_scrubber().scrub(&text);
        assert_eq!(r.text, "key [REDACTED:known-value] done", "{brk:?}");
    }
}

#[test]
fn invisible_characters_inside_a_known_value_do_not_hide_it() {
    for invisible in [
        "\u{200b}", "\u{200d}", "\u{ad}", "\u{feff}", "\u{fe0f}", "\u{2060}",
    ] {
        let (a, b) = TOKEN.split_at(5);
        let (b, c) = b.split_at(9);
        let text = format!("v={a}{invisible}{b}{invisible}{c};");
        let r = known_scrubber().scrub(&text);
        assert_eq!(r.text, "v=[REDACTED:known-value];", "{invisible:?}");
    }
}

#[test]
fn escaped_and_entity_encoded_known_values_are_removed() {
    let each = |f: &dyn Fn(char) -> String| TOKEN.chars().map(f).collect::<String>();
    let forms = [
        each(&|c| format!("\\u{:04x}", u32::from(c))),
        each(&|c| format!("\\u{:04X}", u32::from(c))),
        each(&|c| format!("\\x{:02x}", u32::from(c))),
        each(&|c| format!("&#{};", u32::from(c))),
        each(&|c| format!("&#x{:x};", u32::from(c))),
        // Fullwidth forms fold to ASCII (NFKC's equivalence).
        each(&|c| char::from_u32(u32::from(c) + 0xFEE0).map_or(c.to_string(), String::from)),
    ];
    for form in forms {
        let text = format!("{{\"out\": \"{form}\"}}");
        let r = known_scrubber().scrub(&text);
        assert_eq!(r.text, "{\"out\": \"[REDACTED:known-value]\"}", "{form}");
    }
    // A value with a character that needs an escape, written escaped.
    let s = Scrubber::with_known_values(["p&ss\"w0rd/x"]).expect("scrubber");
    for text in [
        "p&amp;ss&quot;w0rd/x",
        "p&ss\\\"w0rd\\/x",
        "p\\u0026ss\\u0022w0rd/x",
    ] {
        assert_eq!(s.scrub(text).text, "[REDACTED:known-value]", "{text}");
    }
}

#[test]
fn scrubber_is_send_sync_and_cheap_to_clone() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Scrubber>();
    let s = Scrubber::new();
    let t = s.clone();
    let handle = std::thread::spawn(move || {
        t.scrub("xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD")
            .hits
            .len()
    });
    assert_eq!(handle.join().expect("thread"), 1);
    assert!(s.keyword_count() > 500);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "hello world ",
        "\n",
        "token = ",
        "'kxbj4b6u2iazvhc8n6b3oz0j5x6nrpyy'",
        "AKIAZDOCIS2JHTLGMXGE",
        " password: Zq8v2LkP9sXw",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n",
        "-----END RSA PRIVATE KEY-----",
        "https://user:Zq8v2LkP9sXw@example.org/x ",
        "é ü 日本 ",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw",
        "secret",
    ];

    /// Pieces around a known value: the value whole, cut, disguised, and text that begins it.
    const KNOWN_PIECES: &[&str] = &[
        "hello ",
        "\n",
        "tK9vQ2mZ8xL4pR7wB3nC6yH1jF5sD0gA",
        "tK9vQ2mZ8x",
        "L4pR7wB3nC6y",
        "H1jF5sD0gA",
        "tK9\u{200b}vQ",
        "\\u0074K9v",
        "&#116;K9",
        "=\n",
        "\\\n",
        "\r\n",
        "dEs5dlEybVo4eEw0cFI3d0IzbkM2eUgxakY1c0QwZ0E=",
        "é",
        "\\",
        "&",
    ];

    /// A disguise of one character of the value (see `normalise`).
    fn disguise(c: char, how: u8) -> String {
        match how % 7 {
            0 | 1 => c.to_string(),
            2 => format!("\\u{:04x}", u32::from(c)),
            3 => format!("&#{};", u32::from(c)),
            4 => format!("{c}\u{200b}"),
            5 => format!("{c}\n"),
            _ => format!("{c}=\n"),
        }
    }

    proptest! {
        #[test]
        fn streaming_equals_one_shot_with_known_values(
            picks in proptest::collection::vec(0..KNOWN_PIECES.len(), 0..20),
            splits in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let text: String = picks.iter().map(|&i| KNOWN_PIECES[i]).collect();
            let s = known_scrubber();
            let whole = s.scrub(&text);
            let mut cuts: Vec<usize> = splits.iter().map(|i| i.index(text.len() + 1)).collect();
            cuts.sort_unstable();
            let mut st = s.stream();
            let mut out = Vec::new();
            let mut last = 0;
            for c in cuts {
                out.extend(st.push_bytes(&text.as_bytes()[last..c]));
                last = c;
            }
            out.extend(st.push_bytes(&text.as_bytes()[last..]));
            out.extend(st.finish_bytes());
            prop_assert_eq!(String::from_utf8_lossy(&out).into_owned(), whole.text.clone(), "{:?}", text);
            prop_assert_eq!(st.hits(), whole.hits.as_slice());
        }

        /// The plain oracle for the map back to the original: the value, each character
        /// disguised at random, between random words, is redacted over a range that holds
        /// every byte of the disguised value that stands for a character.
        #[test]
        fn a_disguised_known_value_is_redacted_over_its_original_bytes(
            before in "[a-z ]{0,10}",
            hows in proptest::collection::vec(any::<u8>(), 32),
            after in "[a-z ]{0,10}",
        ) {
            let disguised: String = TOKEN
                .chars()
                .zip(hows.iter())
                .map(|(c, &h)| disguise(c, h))
                .collect();
            let text = format!("{before}<{disguised}>{after}");
            let r = known_scrubber().scrub(&text);
            let start = before.len() + 1;
            // The last character's bytes (its trailing invisible or break may stay).
            let last = disguise('A', hows[31]);
            let end = start + disguised.len() - (last.len() - last.trim_end_matches(['\u{200b}', '\n', '=']).len());
            let covering = r.hits.iter().any(|h| h.start <= start && end <= h.end);
            prop_assert!(covering, "{:?} → {:?} {:?}", text, r.text, r.hits);
            prop_assert!(r.hits.iter().all(|h| h.start >= before.len() && h.end <= text.len() - after.len()));
        }
    }

    proptest! {
        #[test]
        fn streaming_equals_one_shot(
            picks in proptest::collection::vec(0..PIECES.len(), 0..24),
            splits in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let text: String = picks.iter().map(|&i| PIECES[i]).collect();
            let s = Scrubber::new();
            let whole = s.scrub(&text);
            let mut cuts: Vec<usize> = splits.iter().map(|i| i.index(text.len() + 1)).collect();
            cuts.sort_unstable();
            let mut st = s.stream();
            let mut out = Vec::new();
            let mut last = 0;
            for c in cuts {
                out.extend(st.push_bytes(&text.as_bytes()[last..c]));
                last = c;
            }
            out.extend(st.push_bytes(&text.as_bytes()[last..]));
            out.extend(st.finish_bytes());
            prop_assert_eq!(String::from_utf8(out).expect("utf-8"), whole.text.clone());
            prop_assert_eq!(st.hits(), whole.hits.as_slice());
            // What was found is gone, unless the same bytes also stand in the input where
            // nothing was found.
            let mut unflagged = text.clone().into_bytes();
            for h in &whole.hits {
                unflagged[h.start..h.end].fill(0);
            }
            let unflagged = String::from_utf8_lossy(&unflagged).into_owned();
            for h in &whole.hits {
                let secret = &text[h.start..h.end];
                prop_assert!(!whole.text.contains(secret) || unflagged.contains(secret));
            }
        }

        #[test]
        fn text_and_bytes_scrub_alike(picks in proptest::collection::vec(0..PIECES.len(), 0..24)) {
            let text: String = picks.iter().map(|&i| PIECES[i]).collect();
            let s = Scrubber::new();
            let as_text = s.scrub(&text);
            let (bytes, hits) = s.scrub_bytes(text.as_bytes());
            prop_assert_eq!(as_text.text.as_bytes(), bytes.as_slice());
            prop_assert_eq!(as_text.hits, hits);
        }

        #[test]
        fn bytes_outside_redactions_are_unchanged(text in "[ -~\\n]{0,300}") {
            let r = Scrubber::new().scrub(&text);
            let mut rebuilt = String::new();
            let mut last = 0;
            for h in &r.hits {
                rebuilt.push_str(&text[last..h.start]);
                rebuilt.push_str(&format!("[REDACTED:{}]", h.shape));
                last = h.end;
            }
            rebuilt.push_str(&text[last..]);
            prop_assert_eq!(rebuilt, r.text);
        }
    }
}
