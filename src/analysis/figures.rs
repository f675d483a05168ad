//! What a chart shows, as data: per-round curves with a band, and
//! heatmaps of a metric over two axes. The analysis computes these; the
//! store draws them.

pub struct Series {
    pub label: String,
    pub mean: Vec<f64>,
    pub low: Vec<f64>,
    pub high: Vec<f64>,
}

pub struct Panel {
    pub title: String,
    pub series: Vec<Series>,
}

pub struct TrajectoryFigure {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub panels: Vec<Panel>,
}

pub struct Heatmap {
    pub title: String,
    pub x_axis: String,
    pub x_values: Vec<String>,
    pub y_axis: String,
    pub y_values: Vec<String>,
    /// (arm, cells[y][x]) with None where no run fell.
    pub panels: Vec<(String, Vec<Vec<Option<f64>>>)>,
    /// Runs in the cells, and how many of them have no value of the
    /// metric (left out of their cell's mean).
    pub runs: usize,
    pub missing: usize,
}
