//! `${CREDENTIALS_DIRECTORY}` in the paths of the security files. systemd's `LoadCredential=`
//! copies files only root may read (an accounts file, a TLS key) into a directory only the
//! service may read and names it in `$CREDENTIALS_DIRECTORY`; a setting refers to a copy as
//! `${CREDENTIALS_DIRECTORY}/accounts.toml` (see `deploy/systemd/credentials.conf`).

/// The variable systemd names the credentials directory in.
pub const VARIABLE: &str = "CREDENTIALS_DIRECTORY";

/// The spellings of the variable a path may start with.
const PREFIXES: [&str; 2] = ["${CREDENTIALS_DIRECTORY}", "$CREDENTIALS_DIRECTORY"];

/// A path names `${CREDENTIALS_DIRECTORY}` but the variable is not set (namesrv was not started
/// by systemd with `LoadCredential=`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("names ${{{VARIABLE}}}, which is not set: start namesrv from systemd with LoadCredential= (deploy/systemd/credentials.conf)")]
pub struct NoCredentialsDirectory;

impl super::Settings {
    /// The security files' paths (accounts file, TLS certificate, key and client CA) with a
    /// leading `${CREDENTIALS_DIRECTORY}` replaced by the variable's value.
    pub fn expand_credentials(&mut self, dir: Option<&str>) -> Result<(), super::SettingsError> {
        let paths = [
            ("acl_accounts_file", &mut self.acl.acl_accounts_file),
            ("tls_cert_file", &mut self.tls.tls_cert_file),
            ("tls_key_file", &mut self.tls.tls_key_file),
            ("tls_client_ca_file", &mut self.tls.tls_client_ca_file),
        ];
        for (key, path) in paths {
            *path = expand(path, dir).map_err(|e| super::SettingsError::Invalid { key, reason: e.to_string() })?;
        }
        Ok(())
    }
}

/// `path` with a leading `${CREDENTIALS_DIRECTORY}` (or `$CREDENTIALS_DIRECTORY`) replaced by
/// `dir`; any other path as it is.
pub fn expand(path: &str, dir: Option<&str>) -> Result<String, NoCredentialsDirectory> {
    let Some(rest) = PREFIXES.iter().find_map(|prefix| path.strip_prefix(prefix)) else {
        return Ok(path.to_owned());
    };
    // `$CREDENTIALS_DIRECTORYX` is another variable's name, not this one: left as it is.
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Ok(path.to_owned());
    }
    let dir = dir.filter(|d| !d.trim().is_empty()).ok_or(NoCredentialsDirectory)?;
    Ok(format!("{}{rest}", dir.trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_credentials_directory_is_replaced_and_other_paths_kept() {
        let dir = Some("/run/credentials/namesrv.service");
        assert_eq!(
            expand("${CREDENTIALS_DIRECTORY}/accounts.toml", dir).unwrap(),
            "/run/credentials/namesrv.service/accounts.toml"
        );
        assert_eq!(expand("$CREDENTIALS_DIRECTORY/tls.key", Some("/c/")).unwrap(), "/c/tls.key");
        assert_eq!(expand("/etc/namesrv/accounts.toml", None).unwrap(), "/etc/namesrv/accounts.toml");
        assert_eq!(expand("$CREDENTIALS_DIRECTORYX/a", None).unwrap(), "$CREDENTIALS_DIRECTORYX/a");
        assert_eq!(expand("", None).unwrap(), "");
        assert_eq!(expand("${CREDENTIALS_DIRECTORY}/a", None), Err(NoCredentialsDirectory));
        assert_eq!(expand("${CREDENTIALS_DIRECTORY}/a", Some(" ")), Err(NoCredentialsDirectory));
    }
}
