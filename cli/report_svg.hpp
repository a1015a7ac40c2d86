#pragma once
// The pictures of `ktune report`, written as inline SVG text: heatmaps of a family's key space,
// a log-log roofline scatter and horizontal bars. No script: tooltips are SVG <title> elements,
// so that the page works from disk, offline and printed.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/params.hpp"

namespace ktune::cli::svg {

// Text safe inside HTML and SVG elements and attribute values.
std::string escape(std::string_view text);

// "rgb(r,g,b)" of `t` in [0, 1] on a sequential scale (dark blue, teal, green, yellow); clamped.
std::string sequential(double t);
// "rgb(r,g,b)" of `t` in [-1, 1] on a diverging scale (blue, white, red); clamped.
std::string diverging(double t);
// A fixed categorical colour for the i-th category.
std::string category(size_t i);
// "black" or "white", whichever reads better on `fill` ("rgb(r,g,b)").
std::string text_on(const std::string& fill);

// One key's cell: its fill, two short lines of text and the tooltip.
struct Cell {
  Params key;
  std::string fill;
  std::string line1, line2;
  std::string tooltip;
  bool gap = false;  // drawn hatched: a key without a kernel
};

// Axes of a key space: the two key fields with the most distinct values (ties: declaration
// order) span each panel, rows before columns in declaration order; one panel per combination
// of the other fields' values.
struct Axes {
  std::string row, col;
  std::vector<std::string> panel;  // in declaration order
};
Axes axes_of(const std::vector<FieldSpec>& fields, const std::vector<Params>& keys);

// Panels of cells (one <svg> each) in a wrapping row. Every cell is a <g class="cell"
// data-key="canonical key"> holding its <title>, <rect> and text. `id` names the container.
std::string heatmap(const std::string& id, const std::vector<FieldSpec>& fields, const Axes& axes,
                    const std::vector<Cell>& cells);

// A colour legend for a continuous scale: `stops` samples of `colour(t)`, t from 0 to 1, labelled
// at both ends and the middle.
std::string legend(const std::string& title, std::string (*colour)(double), const std::string& low,
                   const std::string& mid, const std::string& high);

struct Point {
  double x = 0, y = 0;
  size_t series = 0;
  std::string tooltip;
};
struct Roofs {
  double copy_gbps = 0;      // bytes per ns: the slope of the bandwidth roof
  double matrix_tflops = 0;  // the flat roof; 0 when not measured
  std::string matrix_label;
};
// Arithmetic intensity (FLOP/byte) against TFLOP/s on log axes, the roofs drawn, one colour per
// series (named in the legend). Points with x or y <= 0 are left out.
std::string roofline(const std::vector<Point>& points, const std::vector<std::string>& series, const Roofs& roofs);

struct Bar {
  std::string label;
  double value = 0;
  std::string text;  // printed after the bar
};
// Horizontal bars scaled to the largest value.
std::string bars(const std::vector<Bar>& items);

}  // namespace ktune::cli::svg
