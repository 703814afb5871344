//! Vendored and generated files: someone else's code kept in the tree (`vendor/`,
//! `third_party/`, `node_modules/`) and files a tool writes (`*.pb.go`, `zz_generated.*`,
//! lock files, minified scripts). A task is rarely about them: the ranking counts them
//! down, and a name defined both in them and in the project's own code is the project's.

/// Folders that hold another project's code.
const VENDORED: &[&str] = &[
    "vendor",
    "vendored",
    "third_party",
    "third-party",
    "thirdparty",
    "node_modules",
    "bower_components",
];

/// True when `path` (repository-relative) is vendored or generated.
#[must_use]
pub fn is_foreign(path: &str) -> bool {
    const NAMES: &[&str] = &[
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "cargo.lock",
        "go.sum",
        "poetry.lock",
        "composer.lock",
        "gemfile.lock",
    ];
    const ENDS: &[&str] = &[
        ".pb.go",
        ".pb.gw.go",
        "_pb2.py",
        "_pb2_grpc.py",
        ".min.js",
        ".min.css",
        ".map",
    ];
    let mut parts = path.split('/');
    let name = parts.next_back().unwrap_or(path);
    if parts.any(|p| VENDORED.contains(&p)) {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    NAMES.contains(&lower.as_str())
        || ENDS.iter().any(|e| lower.ends_with(e))
        || lower.starts_with("zz_generated")
        || lower.contains("_generated.")
        || lower.contains(".generated.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_and_generated_files_are_told() {
        for p in [
            "vendor/github.com/x/y/a.go",
            "web/node_modules/left-pad/index.js",
            "api/types/zz_generated.deepcopy.go",
            "api/x.pb.go",
            "Cargo.lock",
            "ui/app.min.js",
        ] {
            assert!(is_foreign(p), "{p}");
        }
        for p in [
            "daemon/vendor.go",
            "src/vendors/a.rs",
            "docs/generated-by.md",
        ] {
            assert!(!is_foreign(p), "{p}");
        }
    }
}
