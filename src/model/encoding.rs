//! The BPE encodings tokens can be counted with.

/// The BPE encodings tokens can be counted with.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    clap::ValueEnum,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum Encoding {
    #[default]
    #[value(name = "o200k_base")]
    #[serde(rename = "o200k_base")]
    O200kBase,
    #[value(name = "cl100k_base")]
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

impl Encoding {
    /// The encoding's name as OpenAI spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}
