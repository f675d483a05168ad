//! Charts as SVG and PNG files: per-round trajectories (one line per arm,
//! mean over seeds with a ±1 sd band) and heatmaps of a summary metric over
//! two axes (one panel per arm). Text uses the bundled DejaVu Sans through
//! ab_glyph, never system fonts, so the same data gives the same bytes on
//! any machine.

use image::ImageEncoder;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

use super::atomic;
use crate::analysis::figures::{Heatmap, TrajectoryFigure};

const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const SANS: &str = "sans-serif";

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let parsed = plotters::style::register_font(SANS, FontStyle::Normal, FONT).is_ok();
        assert!(parsed, "the bundled font parses");
    });
}

/// Colour-blind-safe line colours (Okabe-Ito), by arm index.
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn draw_trajectories<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &TrajectoryFigure,
) -> Drawn<DB> {
    root.fill(&WHITE)?;
    let body = root.titled(&fig.title, (SANS, 20))?;
    let areas = body.split_evenly((1, fig.panels.len()));
    for (area, panel) in areas.iter().zip(&fig.panels) {
        let rounds = panel.series.first().map_or(1, |s| s.mean.len()).max(2);
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, (SANS, 17))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(56)
            .build_cartesian_2d(0f64..(rounds - 1) as f64, 0f64..1f64)?;
        chart
            .configure_mesh()
            .x_desc(&fig.x_label)
            .y_desc(&fig.y_label)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.1}"))
            .label_style((SANS, 13))
            .axis_desc_style((SANS, 14))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (i, s) in panel.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let mut band: Vec<(f64, f64)> = s
                .high
                .iter()
                .enumerate()
                .map(|(r, &y)| (r as f64, y))
                .collect();
            band.extend(s.low.iter().enumerate().rev().map(|(r, &y)| (r as f64, y)));
            chart.draw_series(std::iter::once(Polygon::new(
                band,
                color.mix(0.18).filled(),
            )))?;
            chart
                .draw_series(LineSeries::new(
                    s.mean.iter().enumerate().map(|(r, &y)| (r as f64, y)),
                    color.stroke_width(2),
                ))?
                .label(&s.label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            // Curves settle at 0 or 1 by the end, so mid-right is clear.
            .position(SeriesLabelPosition::MiddleRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .label_font((SANS, 13))
            .draw()?;
    }
    root.present()
}

/// A viridis-like scale through three stops: yellow (low), teal, purple
/// (high); it stays readable in grey and for colour-blind readers.
fn shade(t: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 3] = [
        (253.0, 231.0, 37.0),
        (33.0, 145.0, 140.0),
        (68.0, 1.0, 84.0),
    ];
    let t = t.clamp(0.0, 1.0) * 2.0;
    let (i, f) = if t >= 2.0 {
        (1, 1.0)
    } else {
        (t.floor() as usize, t.fract())
    };
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let lerp = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    RGBColor(lerp(a.0, b.0), lerp(a.1, b.1), lerp(a.2, b.2))
}

/// A value as a heatmap cell shows it: three decimals for fractions, one
/// for percentages and counts.
fn cell_text(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}

/// A heatmap axis of `n` cells: cell i spans [i, i + 1), its tick and
/// label at the centre. (plotters' segmented integer axis maps a single
/// cell to one pixel, which drew a one-row heatmap with no height.)
struct Cells(usize);

impl Ranged for Cells {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, (from, to): (i32, i32)) -> i32 {
        let at = f64::from(to - from) * v / self.0.max(1) as f64;
        from + at.round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _: H) -> Vec<f64> {
        (0..self.0).map(|i| i as f64 + 0.5).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.0 as f64
    }
}

fn draw_heatmap<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, hm: &Heatmap) -> Drawn<DB> {
    root.fill(&WHITE)?;
    let body = root.titled(&hm.title, (SANS, 20))?;
    let values = hm
        .panels
        .iter()
        .flat_map(|(_, c)| c.iter().flatten().flatten().copied());
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let span = if hi > lo { hi - lo } else { 1.0 };
    let (width, _) = body.dim_in_pixel();
    let (panels_area, bar_area) = body.split_horizontally(width.saturating_sub(110));
    let (nx, ny) = (hm.x_values.len(), hm.y_values.len());
    let y_labels = y_label_width(hm);
    let name =
        |values: &[String], v: &f64| values.get(v.floor() as usize).cloned().unwrap_or_default();
    for (area, (arm, cells)) in panels_area
        .split_evenly((1, hm.panels.len()))
        .iter()
        .zip(&hm.panels)
    {
        let mut chart = ChartBuilder::on(area)
            .caption(arm, (SANS, 17))
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(y_labels)
            .build_cartesian_2d(Cells(nx), Cells(ny))?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(&hm.x_axis)
            .y_desc(&hm.y_axis)
            .x_labels(nx)
            .y_labels(ny)
            .x_label_formatter(&|v| fit(&name(&hm.x_values, v), X_LABEL_CHARS))
            .y_label_formatter(&|v| fit(&name(&hm.y_values, v), Y_LABEL_CHARS))
            .label_style((SANS, 13))
            .axis_desc_style((SANS, 14))
            .draw()?;
        for (y, row) in cells.iter().enumerate() {
            for (x, cell) in row.iter().enumerate() {
                let (x, y) = (x as f64, y as f64);
                let corners = [(x, y), (x + 1.0, y + 1.0)];
                let (fill, text, ink) = match cell {
                    Some(v) => {
                        let t = (v - lo) / span;
                        (
                            shade(t),
                            cell_text(*v),
                            if t > 0.45 { WHITE } else { BLACK },
                        )
                    }
                    // No run fell here, or none of its runs has a value.
                    None => (RGBColor(230, 230, 230), "no value".to_string(), BLACK),
                };
                chart.draw_series(std::iter::once(Rectangle::new(corners, fill.filled())))?;
                let style = TextStyle::from((SANS, 14))
                    .color(&ink)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                chart.draw_series(std::iter::once(Text::new(text, (x + 0.5, y + 0.5), style)))?;
            }
        }
    }
    // Colour bar: the scale every panel shares.
    let bar = bar_area.margin(40, 60, 20, 50);
    let (bw, bh) = bar.dim_in_pixel();
    let steps = 64;
    for k in 0..steps {
        let y0 = bh as i32 - ((k + 1) * bh as i32) / steps;
        let y1 = bh as i32 - (k * bh as i32) / steps;
        let color = shade(k as f64 / (steps - 1) as f64);
        bar.draw(&Rectangle::new(
            [(0, y0), (bw as i32 / 3, y1)],
            color.filled(),
        ))?;
    }
    let label = TextStyle::from((SANS, 13)).color(&BLACK);
    bar.draw(&Text::new(
        cell_text(hi),
        (bw as i32 / 3 + 4, 0),
        label.clone(),
    ))?;
    bar.draw(&Text::new(
        cell_text(lo),
        (bw as i32 / 3 + 4, bh as i32 - 14),
        label,
    ))?;
    root.present()
}

fn err(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// `stem` with an extension appended: a stem may itself contain dots
/// (`communication=0.8`), which `Path::with_extension` would cut off.
pub fn with_suffix(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Draws a chart into an SVG string and an RGB buffer, encodes the PNG in
/// memory and writes `stem.svg` and `stem.png` atomically.
fn write_pair(
    stem: &Path,
    size: (u32, u32),
    draw_svg: impl Fn(&mut String) -> std::io::Result<()>,
    draw_png: impl Fn(&mut [u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut svg = String::new();
    draw_svg(&mut svg)?;
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    draw_png(&mut rgb)?;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, size.0, size.1, image::ColorType::Rgb8)
        .map_err(err)?;
    atomic::write(&with_suffix(stem, "svg"), svg.as_bytes())?;
    atomic::write(&with_suffix(stem, "png"), &png)
}

pub fn write_trajectories(stem: &Path, fig: &TrajectoryFigure) -> std::io::Result<()> {
    register_font();
    let size = (420 * fig.panels.len() as u32 + 40, 460);
    write_pair(
        stem,
        size,
        |svg| {
            draw_trajectories(&SVGBackend::with_string(svg, size).into_drawing_area(), fig)
                .map_err(err)
        },
        |rgb| {
            draw_trajectories(
                &BitMapBackend::with_buffer(rgb, size).into_drawing_area(),
                fig,
            )
            .map_err(err)
        },
    )
}

/// The characters of the longest label.
fn longest(labels: &[String]) -> u32 {
    labels.iter().map(|v| v.chars().count()).max().unwrap_or(0) as u32
}

/// The most characters a column's or a row's label shows. A longer arm
/// variant's label shortens its arm name first, keeping the settings that
/// tell it from its neighbours; any other keeps its start and end.
const X_LABEL_CHARS: usize = 60;
const Y_LABEL_CHARS: usize = 60;

fn fit(label: &str, most: usize) -> String {
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= most {
        return label.to_string();
    }
    let settings = match label.find('[') {
        Some(at) if label.ends_with(']') => label[at..].chars().count(),
        _ => 0,
    };
    // Room for at least a few characters of the name and the ellipsis.
    let (head, tail) = if settings > 0 && settings + 5 <= most {
        (most - 1 - settings, settings)
    } else {
        ((most - 1) / 2, most - 1 - (most - 1) / 2)
    };
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// Pixels for the row labels, from the longest as shown.
fn y_label_width(hm: &Heatmap) -> u32 {
    (longest(&hm.y_values).min(Y_LABEL_CHARS as u32) * 8 + 40).max(60)
}

pub fn write_heatmap(stem: &Path, hm: &Heatmap) -> std::io::Result<()> {
    register_font();
    let title = hm.title.chars().count() as u32 * 11 + 40;
    let rows = hm.y_values.len() as u32;
    // Columns wide enough for their labels (arm variants' are long), so
    // that neighbours do not print over each other.
    let column = (longest(&hm.x_values).min(X_LABEL_CHARS as u32) * 7 + 16).max(60);
    let panel = (y_label_width(hm) + 30 + column * hm.x_values.len() as u32).max(360);
    let size = (
        (panel * hm.panels.len() as u32 + 150).max(title),
        (200 + 34 * rows).max(460),
    );
    write_pair(
        stem,
        size,
        |svg| {
            draw_heatmap(&SVGBackend::with_string(svg, size).into_drawing_area(), hm).map_err(err)
        },
        |rgb| {
            draw_heatmap(
                &BitMapBackend::with_buffer(rgb, size).into_drawing_area(),
                hm,
            )
            .map_err(err)
        },
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_labels_keep_their_settings_or_their_ends() {
        assert_eq!(super::fit("short", 60), "short");
        let long = "endorsement_with_long_name[gain=3.0, report_fraction=0.1, shortcut_prob=0.05]";
        let shown = super::fit(long, 60);
        assert_eq!(
            shown,
            "endorsem…[gain=3.0, report_fraction=0.1, shortcut_prob=0.05]"
        );
        assert_eq!(shown.chars().count(), 60);
        // Settings too long to keep whole: the start and the end.
        let shown = super::fit(long, 30);
        assert_eq!(shown, "endorsement_wi…tcut_prob=0.05]");
        assert_eq!(shown.chars().count(), 30);
    }
}
