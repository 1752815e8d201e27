//! Settings that take one of a few names: parsed once, case-insensitively, into enums.

use thiserror::Error;

/// A name that is none of a setting's choices.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{got:?} is not one of: {choices}")]
pub struct BadChoice {
    /// What was given.
    pub got: String,
    /// The accepted names, comma-separated.
    pub choices: &'static str,
}

/// Declares a settings enum whose variants are written as the given names; it reads any case
/// and serializes as the name, so `-p` output and config files round-trip.
macro_rules! choice {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// The name as written in settings.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::settings::choice::BadChoice;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $(if s.trim().eq_ignore_ascii_case($text) {
                    return Ok(Self::$variant);
                })+
                Err($crate::settings::choice::BadChoice {
                    got: s.to_owned(),
                    choices: concat!($($text, ", "),+).trim_end_matches(", "),
                })
            }
        }

        impl TryFrom<String> for $name {
            type Error = $crate::settings::choice::BadChoice;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                s.parse()
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.as_str().to_owned()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

choice! {
    /// Whether this server is a RocketMQ 5 controller too (Java's `enableControllerInNamesrv`),
    /// or only one (Java's `mqcontroller`).
    ControllerMode {
        /// No controller: the NameServer only.
        Off = "off",
        /// The NameServer and a controller beside it, on the controller port.
        Embedded = "embedded",
        /// A controller only: no NameServer port.
        Standalone = "standalone",
    }
}

choice! {
    /// Which serialization response headers use.
    ResponseSerializeType {
        /// The request's own serialization (the 4.9.x behaviour, which every client reads).
        Request = "request",
        /// Always JSON (the 5.x behaviour).
        Json = "json",
        /// Always the ROCKETMQ binary header.
        RocketMq = "rocketmq",
    }
}

choice! {
    /// Where register bodies over 64 KiB are decoded.
    LargeBodyDecode {
        /// Compressed, non-JSON and over-64-KiB bodies on the blocking pool, small JSON in place.
        Auto = "auto",
        /// Always on the blocking pool.
        Blocking = "blocking",
        /// Always in place, on the connection's thread.
        Inline = "inline",
    }
}

choice! {
    /// How the `-c` file is read.
    ConfigFormat {
        /// By extension (`.toml`, `.properties`), else by content: TOML when it parses as TOML,
        /// Java properties otherwise (Apache's distribution calls its file `namesrv.conf`).
        Auto = "auto",
        /// TOML.
        Toml = "toml",
        /// Java `.properties` text, as Java's `NamesrvStartup` reads its `-c` file.
        Properties = "properties",
    }
}

choice! {
    /// How log lines are written.
    LogFormat {
        /// Human-readable lines.
        Text = "text",
        /// One JSON object per line, tracing fields as keys.
        Json = "json",
    }
}

choice! {
    /// How `-p` prints the effective settings.
    PrintFormat {
        /// `key = value` TOML lines under our names, loadable with `-c`.
        Toml = "toml",
        /// `key=value` lines under Java's names, to diff against a Java NameServer's `-p`.
        Properties = "properties",
    }
}

choice! {
    /// Which request codes need RocketMQ session credentials when `acl_enabled` is on.
    AclProtect {
        /// Codes that change state (100, 102, 205, 216, 217, 318, 327) and 319, which reveals
        /// the configuration.
        Admin = "admin",
        /// Those, and what brokers send about themselves (103, 104, 322, 904).
        Broker = "broker",
        /// Every code, route and list queries included.
        All = "all",
    }
}

choice! {
    /// TLS on the remoting port, as Java's `tls.server.mode`.
    TlsMode {
        /// Plain TCP only; a TLS ClientHello is closed with a warning.
        Disabled = "disabled",
        /// TLS and plain TCP on one port: a first byte 0x16 (a TLS handshake record) is TLS.
        Permissive = "permissive",
        /// TLS only; plain connections are closed with a warning.
        Enforcing = "enforcing",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_in_any_case_and_write_back_as_given() {
        assert_eq!("RocketMQ".parse::<ResponseSerializeType>(), Ok(ResponseSerializeType::RocketMq));
        assert_eq!(LargeBodyDecode::Blocking.to_string(), "blocking");
        let err = "xml".parse::<ResponseSerializeType>().unwrap_err();
        assert_eq!(err.to_string(), r#""xml" is not one of: request, json, rocketmq"#);
    }
}
