//! The compile's stages, one module a stage, in the order the compile runs them
//! (the compile strings them together): [`contract`] (load and validate the
//! delegation contracts) → [`expand`] (globs, with [`ignore`] rules; [`truth`] files that
//! changed) → [`overrides`] (the delegator's layer 2; [`authored`]: an author's list that is
//! also the manifest) → [`related`] (files around the owned ones) → [`measure`] (read each
//! file once through the trust boundary; [`anchors`], [`tokens`], [`known`]) → [`budget`]
//! (caps, the ladder of [`degrade`]) → [`manifest`] (text and lock; [`adopt`] turns a hand
//! edit back into overrides).
//!
//! A stage knows its own inputs and outputs, never the request as a whole: nothing here
//! imports the settings, the workflows or anything that renders.

pub mod adopt;
pub mod anchors;
pub mod authored;
pub mod budget;
pub mod contract;
pub mod degrade;
pub mod expand;
pub mod ignore;
pub mod known;
pub mod manifest;
pub mod measure;
pub mod overrides;
pub mod readme;
pub mod related;
pub mod task_words;
pub mod tokens;
pub mod truth;
