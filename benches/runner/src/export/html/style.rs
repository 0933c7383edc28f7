//! The page's style sheet, inline: the page loads nothing.

pub const CSS: &str = r#"
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; background: #fff;
  max-width: 1500px; margin: 0 auto; padding: 0 16px 40px; }
h1 { font-size: 1.6em; margin: .8em 0 .2em; }
h1 code, h2 code, h3 code { font-size: .85em; }
h2 { font-size: 1.25em; margin: 1.6em 0 .5em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 .4em; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f4f4f4; padding: 0 3px; border-radius: 3px; }
.meta { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 0 32px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: .4em 0; }
dt { color: #666; } dd { margin: 0; overflow-wrap: anywhere; }
.warn { color: #b00; font-weight: 600; }
nav a { margin-right: 12px; }
.scroll { overflow-x: auto; margin-bottom: .6em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #e2e2e2; padding: 3px 7px; vertical-align: top; }
th { background: #f6f6f6; font-weight: 600; text-align: left; }
td.num, th.lib { text-align: right; white-space: nowrap; }
th.lib small { display: block; font-weight: 400; color: #666; }
td.num small { display: block; color: #666; font-size: 11px; }
td.best { background: #e3f4e1; font-weight: 600; }
td.r2 { background: #f7f7e4; } td.r3 { background: #fbeedd; } td.r4 { background: #f9e0de; }
td.unsupported { color: #777; font-style: italic; text-align: center; background: #fafafa; }
td.failed { color: #b00; font-weight: 600; text-align: center; background: #fdeeee; }
td.none { color: #bbb; text-align: center; }
td.num .width { color: #666; font-size: 11px; }
td.wide .width { color: #b00; font-weight: 600; }
td.num .cut { color: #b00; font-style: italic; }
td.failed a, td.unsupported a { color: inherit; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 560px), 1fr)); gap: 12px 24px; }
figure { margin: 0; min-width: 0; }
figcaption { font-weight: 600; margin: .3em 0; }
figcaption span { font-weight: 400; color: #666; font-size: 12px; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { font-size: 11px; fill: #333; }
svg.chart .tick text { fill: #555; }
svg.chart .grid { stroke: #e6e6e6; } svg.chart .minor { stroke: #f3f3f3; }
svg.chart .axis { stroke: #999; }
svg.chart text.v { paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
svg.chart .na { font-style: italic; fill: #999; }
svg.chart .na.failed { fill: #c00; }
ol.notes li { margin: .2em 0; overflow-wrap: anywhere; }
p.explain { color: #555; max-width: 70em; }
"#;
