//! Line charts of time series and histograms, as SVG text.

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

/// One named series of (x, y) points.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Colours that stay distinguishable for the common colour-vision deficiencies (Okabe–Ito).
const PALETTE: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
];

fn range(values: impl Iterator<Item = f64>, pad_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if pad_zero {
        lo = lo.min(0.0);
    }
    if (hi - lo).abs() < f64::EPSILON {
        hi = lo + 1.0;
    }
    (lo, hi + (hi - lo) * 0.05)
}

/// A line chart: x is usually seconds (relative), y the measured value.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    width: u32,
    height: u32,
) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let (x0, x1) = range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
            false,
        );
        let (y0, y1) = range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            true,
        );
        let chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, y0..y1);
        let Ok(mut chart) = chart else {
            return svg_fallback(title, width, height);
        };
        let _ = chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .light_line_style(RGBColor(235, 235, 235))
            .label_style(("sans-serif", 12))
            .draw();
        for (i, s) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            if let Ok(a) = chart.draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            )) {
                a.label(s.name.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            }
        }
        if series.len() > 1 {
            let _ = chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .label_font(("sans-serif", 12))
                .draw();
        }
        let _ = root.present();
    }
    svg
}

/// A histogram of latencies: `buckets` are (upper bound, count).
pub fn histogram(
    title: &str,
    x_label: &str,
    buckets: &[(f64, u64)],
    width: u32,
    height: u32,
) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let max = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
        let n = buckets.len().max(1);
        let chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(0usize..n, 0u64..(max + max / 10 + 1));
        let Ok(mut chart) = chart else {
            return svg_fallback(title, width, height);
        };
        let labels: Vec<String> = buckets.iter().map(|b| format!("{:.0}", b.0)).collect();
        let _ = chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc("count")
            .x_labels(n.min(12))
            .x_label_formatter(&|i| labels.get(*i).cloned().unwrap_or_default())
            .label_style(("sans-serif", 12))
            .draw();
        let _ = chart.draw_series(
            buckets
                .iter()
                .enumerate()
                .map(|(i, b)| Rectangle::new([(i, 0), (i + 1, b.1)], PALETTE[0].filled())),
        );
        let _ = root.present();
    }
    svg
}

fn svg_fallback(title: &str, width: u32, height: u32) -> String {
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\"><text x=\"10\" y=\"20\">{}: no data</text></svg>", title.replace('<', "&lt;"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_chart_draws_each_series_with_a_legend() {
        let s = vec![
            Series {
                name: "busy %".into(),
                points: vec![(0.0, 10.0), (5.0, 40.0), (10.0, 25.0)],
            },
            Series {
                name: "sign/s".into(),
                points: vec![(0.0, 1.0), (5.0, 2.0), (10.0, 3.0)],
            },
        ];
        let svg = line_chart("HSM load", "seconds", "value", &s, 640, 320);
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("HSM load") && svg.contains("busy %") && svg.contains("sign/s"));
        // Each series: its line and its legend mark, in its own colour.
        assert!(svg.matches("#0072B2").count() >= 2, "first series");
        assert!(svg.matches("#E69F00").count() >= 2, "second series");
    }

    #[test]
    fn empty_series_still_render() {
        let svg = line_chart("nothing yet", "s", "v", &[], 300, 200);
        assert!(svg.contains("<svg"));
        let svg = histogram("latency", "µs", &[(10.0, 3), (20.0, 5)], 300, 200);
        assert!(svg.matches("<rect").count() >= 2);
    }
}
