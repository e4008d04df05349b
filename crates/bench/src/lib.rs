//! `bench` — latency probes over `hsm` (HDR histograms, sweeps, verdicts, capacity), and the
//! charts for them and the statistics dashboard, drawn with plotters as SVG (text stays
//! text: readable at any size, no font files needed, and the UI can turn it into PNG).

pub mod charts;
pub mod probe;
pub mod stats;
