//! The caps a compile keeps to: files, lines, tokens, a consumer's bytes.

use serde::Serialize;

/// The caps; `0` means no cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Caps {
    pub max_files: u64,
    pub max_lines: u64,
    pub max_tokens: u64,
    /// Bytes of the whole selection, as the consumer counts them (Trellis' total).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_bytes: u64,
    /// Bytes past which the consumer cuts a file (Trellis' per-file cap): a file counts at
    /// most this much against `max_bytes`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file_bytes: u64,
    /// Whether a cap moves entries down the ladder (outline, index line) before it drops
    /// them (`--no-degrade`, `[budget] degrade = false`: it drops them, as the first round).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub degrade: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_yes(b: &bool) -> bool {
    *b
}

impl Caps {
    /// These caps with the ones a caller gave (flags, tool arguments) put over them.
    #[must_use]
    pub fn overridden(self, files: Option<u64>, lines: Option<u64>, tokens: Option<u64>) -> Caps {
        Caps {
            max_files: files.unwrap_or(self.max_files),
            max_lines: lines.unwrap_or(self.max_lines),
            max_tokens: tokens.unwrap_or(self.max_tokens),
            max_bytes: self.max_bytes,
            file_bytes: self.file_bytes,
            degrade: self.degrade,
        }
    }
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            max_files: 5,
            max_lines: 4000,
            max_tokens: 0,
            max_bytes: 0,
            file_bytes: 0,
            degrade: true,
        }
    }
}
