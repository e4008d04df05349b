//! `bench` — charts for the statistics dashboard and the latency probes, drawn with
//! plotters as SVG (text stays text: readable at any size, no font files needed, and the UI
//! can turn it into PNG).

pub mod charts;
