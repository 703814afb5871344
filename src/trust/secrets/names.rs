//! Secret files recognised by their repository-relative path alone.
//!
//! Matching is ASCII case-insensitive on `/`-separated paths. A base-name rule
//! wins over a folder rule, so `secrets/.env` reports the `.env` rule.

/// Extensions after which `credentials*`, `token` and `tokens` are treated as
/// data files (and therefore secrets).
const DATA_EXTENSIONS: &[&str] = &[
    "json", "yaml", "yml", "toml", "ini", "txt", "xml", "csv", "cfg", "conf",
];

/// Base-name suffix rules (the name is lower-cased first).
const SUFFIX_RULES: &[(&str, &str)] = &[
    (".pem", "private key file (`*.pem`)"),
    (".key", "private key file (`*.key`)"),
    (".p12", "key store file (`*.p12`)"),
    (".pfx", "key store file (`*.pfx`)"),
    (".jks", "key store file (`*.jks`)"),
    (".keystore", "key store file (`*.keystore`)"),
    (".kdbx", "KeePass database (`*.kdbx`)"),
    (".ppk", "PuTTY private key file (`*.ppk`)"),
    (".tfvars", "Terraform variables file (`*.tfvars`)"),
    (".tfvars.json", "Terraform variables file (`*.tfvars`)"),
    (".tfstate", "Terraform state file (`*.tfstate`)"),
    (".tfstate.backup", "Terraform state file (`*.tfstate`)"),
    (".token", "token file (`*.token`)"),
];

/// Base-name prefix rules for SSH keys (the name is lower-cased first).
const SSH_KEY_RULES: &[(&str, &str)] = &[
    ("id_rsa", "SSH key file (`id_rsa*`)"),
    ("id_dsa", "SSH key file (`id_dsa*`)"),
    ("id_ecdsa", "SSH key file (`id_ecdsa*`)"),
    ("id_ed25519", "SSH key file (`id_ed25519*`)"),
];

/// Exact base names (the name is lower-cased first).
const EXACT_RULES: &[(&str, &str)] = &[
    (".env", "`.env` file"),
    (".npmrc", "`.npmrc` file"),
    (".pypirc", "`.pypirc` file"),
    (".netrc", "`.netrc` file"),
    ("_netrc", "`.netrc` file"),
    (".git-credentials", "`.git-credentials` file"),
    (".htpasswd", "`.htpasswd` file"),
    (".pgpass", "`.pgpass` file"),
    (".vault-token", "`.vault-token` file"),
    (".s3cfg", "`.s3cfg` file"),
    (".boto", "`.boto` file"),
    ("wp-config.php", "`wp-config.php` file"),
    (".dockercfg", "Docker credentials file"),
    ("secring.gpg", "GnuPG secret keyring"),
    ("terraform.rc", "Terraform credentials file"),
    (".terraformrc", "Terraform credentials file"),
    ("credentials.tfrc.json", "Terraform credentials file"),
];

/// `(folder, base name)` pairs: a file with that base name directly inside a
/// folder of that name (both lower-cased first).
const FOLDER_FILE_RULES: &[(&str, &str, &str)] = &[
    (
        ".docker",
        "config.json",
        "Docker credentials file (`.docker/config.json`)",
    ),
    (".kube", "config", "Kubernetes config (`.kube/config`)"),
    (".ssh", "identity", "SSH key file (`.ssh/identity`)"),
    (".gnupg", "secring.gpg", "GnuPG secret keyring"),
    (".azure", "accesstokens.json", "Azure CLI token cache"),
    (".config", "hub", "GitHub `hub` credentials"),
];

/// Why a file is a secret by its path, or `None` when its name is harmless.
///
/// `rel_path` is repository-relative with `/` separators, e.g.
/// `"config/.env.local"`. Matching is ASCII case-insensitive. The base name
/// is checked against the name rules (`.env`, `.env.*`, `*.pem`, `*.key`,
/// `*.p12`, `*.pfx`, `*.jks`, `*.keystore`, `*.kdbx`, `*.ppk`, `id_rsa*`,
/// `id_dsa*`, `id_ecdsa*`, `id_ed25519*`, `.npmrc`, `.pypirc`, `.netrc`,
/// `.git-credentials`, `.htpasswd`, `.pgpass`, `.vault-token`, `.s3cfg`,
/// `.boto`, `wp-config.php`, `*.tfvars`, `*.tfstate`, `*.token`,
/// `kubeconfig*`, `.docker/config.json`, `.kube/config`, and
/// `credentials*` / `token` / `tokens` with no extension or a data
/// extension); every folder is checked for being named exactly `secret`,
/// `secrets` or `.git`. The returned rule is a short human phrase such as
/// "`.env` file" or "`secrets/` folder".
#[must_use]
pub fn by_path(rel_path: &str) -> Option<&'static str> {
    let trimmed = rel_path.trim_end_matches('/');
    let (dirs, base) = trimmed.rsplit_once('/').unwrap_or(("", trimmed));
    let base = base.to_ascii_lowercase();
    let parent = dirs.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let folder_file = FOLDER_FILE_RULES
        .iter()
        .find(|(folder, file, _)| parent == *folder && base == *file)
        .map(|&(_, _, rule)| rule);
    folder_file
        .or_else(|| base_name_rule(&base))
        .or_else(|| folder_rule(dirs))
}

/// The rule for a folder on the path, if any.
fn folder_rule(dirs: &str) -> Option<&'static str> {
    dirs.split('/').find_map(|dir| {
        if dir.eq_ignore_ascii_case("secret") {
            Some("`secret/` folder")
        } else if dir.eq_ignore_ascii_case("secrets") {
            Some("`secrets/` folder")
        } else if dir.eq_ignore_ascii_case(".git") {
            Some("`.git/` folder (never read)")
        } else {
            None
        }
    })
}

/// The rule for a lower-cased base name, if any.
fn base_name_rule(name: &str) -> Option<&'static str> {
    if name.starts_with(".env.") {
        return Some("`.env` file");
    }
    let named = EXACT_RULES
        .iter()
        .find(|(exact, _)| name == *exact)
        .or_else(|| {
            SUFFIX_RULES
                .iter()
                .find(|(suffix, _)| name.ends_with(suffix))
        })
        .or_else(|| {
            SSH_KEY_RULES
                .iter()
                .find(|(prefix, _)| name.starts_with(prefix))
        });
    if let Some(&(_, rule)) = named {
        return Some(rule);
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) => (stem, Some(ext)),
        None => (name, None),
    };
    let data_like = ext.is_none_or(|ext| DATA_EXTENSIONS.contains(&ext));
    if !data_like {
        return None;
    }
    if name.starts_with("kubeconfig") {
        Some("Kubernetes config (`kubeconfig*`)")
    } else if name.starts_with("credentials") {
        Some("credentials file")
    } else if stem == "token" || stem == "tokens" {
        Some("token file (`token`, `tokens`)")
    } else {
        None
    }
}
