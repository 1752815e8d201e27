use super::*;

fn parse(text: &str) -> Result<Accounts, AccountsError> {
    Accounts::parse(text, Path::new("/etc/namesrv/accounts.toml"))
}

const GOOD: &str = r#"
allow = ["127.0.0.0/8", "::1"]

[[accounts]]
access_key = "ops"
secret_key = "s3cret-ops"
role = "admin"

[[accounts]]
access_key = "broker-a"
secret_key = "s3cret-b"
role = "Broker"
brokers = ["broker-a", "broker-b"]
allow = ["10.1.2.0/24"]

[[accounts]]
access_key = "any-broker"
secret_key = "x"
role = "broker"
brokers = ["*"]

[[accounts]]
access_key = "app"
secret_key = "y"
role = "client"
"#;

#[test]
fn a_good_file_loads_every_account_with_its_role_brokers_and_addresses() {
    let accounts = parse(GOOD).unwrap();
    assert_eq!(accounts.len(), 4);
    let ops = accounts.get("ops").unwrap();
    assert_eq!((ops.role, ops.secret()), (Role::Admin, "s3cret-ops"));
    let broker = accounts.get("broker-a").unwrap();
    assert_eq!(broker.role, Role::Broker);
    assert!(broker.may_act_for("broker-b") && !broker.may_act_for("broker-c"));
    assert!(broker.allows("10.1.2.9".parse().unwrap()) && !broker.allows("10.1.3.9".parse().unwrap()));
    assert!(accounts.get("any-broker").unwrap().may_act_for("whatever"));
    assert!(ops.allows("192.0.2.1".parse().unwrap()), "no list of its own: any address");
    assert!(accounts.allows("127.0.0.1".parse().unwrap()) && accounts.allows("::1".parse().unwrap()));
    assert!(accounts.allows("::ffff:127.0.0.5".parse().unwrap()), "IPv4-mapped peers match IPv4 blocks");
    assert!(!accounts.allows("192.0.2.1".parse().unwrap()));
    assert!(accounts.get("nobody").is_none());
    assert!(parse("").unwrap().is_empty(), "an empty file is no accounts");
}

#[test]
fn secrets_never_show_in_debug_output_or_errors() {
    let accounts = parse(GOOD).unwrap();
    let shown = format!("{accounts:?}");
    assert!(shown.contains("broker-a") && !shown.contains("s3cret"), "{shown}");
    let err =
        parse("[[accounts]]\naccess_key = \"k\"\nsecret_key = \"hunter2\"\nrole = \"admin\"\nbogus = 1\n").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("line 5") && text.contains("bogus") && !text.contains("hunter2"), "{text}");
    let err = parse("[[accounts]]\naccess_key = \"k\"\nsecret_key = hunter2\n").unwrap_err().to_string();
    assert!(!err.contains("hunter2") && err.contains("line 3"), "{err}");
}

#[test]
fn every_mistake_names_the_file_and_the_account() {
    let account = |body: &str| {
        format!("[[accounts]]\naccess_key = \"first\"\nsecret_key = \"s\"\nrole = \"admin\"\n\n[[accounts]]\n{body}\n")
    };
    let cases = [
        ("access_key = \"first\"\nsecret_key = \"t\"\nrole = \"admin\"", AccountProblem::Duplicate(1)),
        ("access_key = \"k\"\nsecret_key = \"\"\nrole = \"admin\"", AccountProblem::EmptySecret),
        ("access_key = \" \"\nsecret_key = \"s\"\nrole = \"admin\"", AccountProblem::EmptyAccessKey),
        ("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"root\"", AccountProblem::UnknownRole("root".into())),
        ("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"broker\"", AccountProblem::NoBrokers),
        ("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"broker\"\nbrokers = []", AccountProblem::NoBrokers),
        (
            "access_key = \"k\"\nsecret_key = \"s\"\nrole = \"client\"\nbrokers = [\"b\"]",
            AccountProblem::BrokersNotBroker(Role::Client),
        ),
        (
            "access_key = \"k\"\nsecret_key = \"s\"\nrole = \"admin\"\nallow = [\"10.0.0.0/33\"]",
            AccountProblem::BadAllow("10.0.0.0/33".into()),
        ),
    ];
    for (body, expected) in cases {
        match parse(&account(body)) {
            Err(AccountsError::Account { index, problem, ref path, .. }) => {
                assert_eq!((index, &problem), (2, &expected), "{body}");
                assert_eq!(path, Path::new("/etc/namesrv/accounts.toml"));
            }
            other => panic!("{body}: expected {expected:?}, got {other:?}"),
        }
    }
    let err = parse(&account("access_key = \"k\"\nsecret_key = \"s\"\nrole = \"root\"")).unwrap_err().to_string();
    assert_eq!(err, "accounts file /etc/namesrv/accounts.toml, account 2 (access_key \"k\"): unknown role \"root\" (admin, broker, client or peer)");
    let err = parse("allow = [\"nonsense\"]\n").unwrap_err().to_string();
    assert!(err.contains("/etc/namesrv/accounts.toml") && err.contains("nonsense"), "{err}");
}

#[test]
fn an_unreadable_file_is_named() {
    let err = Accounts::load(Path::new("/nonexistent/accounts.toml")).unwrap_err().to_string();
    assert!(err.starts_with("cannot read accounts file /nonexistent/accounts.toml"), "{err}");
}
