//! The frame every page of the site shares: head with the inline style
//! (the report's, `export::html::CSS`, and the site's additions), the
//! navigation, the filter (library, scenario, bus) and its script. Nothing
//! is fetched: the pages work from `file://` and any static host.
//!
//! The filter hides every element whose `data-lib`, `data-scenario` or
//! `data-bus` attribute does not contain the text typed (case-insensitive);
//! elements without the attribute stay.

use std::fmt::Write;

use super::model::Site;
use crate::export::html::{esc, CSS};

const SITE_CSS: &str = r#"
header.site { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; border-bottom: 1px solid #ddd; padding: 8px 0; }
header.site b { font-size: 1.1em; }
form.filter { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 10px 0; }
form.filter label { display: flex; flex-direction: column; font-size: 12px; color: #555; }
form.filter input, form.filter select { font: inherit; padding: 3px 6px; min-width: 10em; }
.pair { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 8px 20px; align-items: start; margin-bottom: 1.2em; }
@media (max-width: 900px) { .pair { grid-template-columns: minmax(0, 1fr); } }
@media (max-width: 600px) { body { padding: 0 8px 24px; font-size: 13px; } th, td { padding: 2px 4px; } }
ul.scenarios { columns: 16em; padding-left: 1.2em; }
svg.chart .band { opacity: .18; } svg.chart .step { stroke: #000; stroke-width: .8; }
svg.chart .lfl { stroke: #b00; stroke-dasharray: 3 3; } svg.chart text.lfl { fill: #b00; stroke: none; }
th.version-new { background: #fff3c4; }
table.over-runs tbody th, table.library tbody th { white-space: nowrap; }
td.up { background: #f9e0de; } td.down { background: #e3f4e1; }
td.v-regressed, td.v-broken, td.v-missing, td.v-dropped { color: #b00; font-weight: 600; }
td.v-improved, td.v-fixed { color: #286e1f; font-weight: 600; }
.legend span { display: inline-block; margin-right: 10px; white-space: nowrap; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; }
.hidden { display: none !important; }
"#;

/// Applies the filter on input and once loaded; pages that draw later call `siteFilter()` again.
const FILTER_JS: &str = r#"
function siteFilter() {
  var f = {};
  ['lib', 'scenario', 'bus'].forEach(function (k) {
    var el = document.getElementById('f-' + k);
    f[k] = el ? el.value.trim().toLowerCase() : '';
  });
  document.querySelectorAll('[data-lib],[data-scenario],[data-bus]').forEach(function (el) {
    var hide = false;
    ['lib', 'scenario', 'bus'].forEach(function (k) {
      var v = el.getAttribute('data-' + k);
      if (f[k] && v !== null && v.toLowerCase().indexOf(f[k]) < 0) hide = true;
    });
    el.classList.toggle('hidden', hide);
  });
}
document.querySelectorAll('form.filter input').forEach(function (el) { el.addEventListener('input', siteFilter); });
siteFilter();
"#;

/// Palette per library (Tableau 10, the yellow darkened), by the adapter's place among the site's.
pub const COLOURS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b8a031", "#b07aa1", "#ff9da7", "#9c755f", "#6b6ecf",
];

pub fn colour(site: &Site, adapter: &str) -> &'static str {
    COLOURS[site.adapter_index(adapter) % COLOURS.len()]
}

/// A whole page: `body` inside the shared frame; `script` runs before the filter's.
pub fn page(site: &Site, title: &str, body: &str, script: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}{SITE_CSS}</style>\n</head>\n<body>\n\
         <header class=\"site\"><b>dbus-matrix</b><nav><a href=\"index.html\">latest run</a>\
         <a href=\"index.html#scenarios\">scenarios</a><a href=\"index.html#libraries\">libraries</a><a href=\"compare.html\">compare two runs</a>\
         <a href=\"index.html#runs\">runs and machines</a></nav></header>\n",
        esc(title)
    );
    filter_form(site, &mut s);
    s.push_str(body);
    let _ = write!(s, "<script>{script}{FILTER_JS}</script>\n</body>\n</html>\n");
    s
}

fn filter_form(site: &Site, s: &mut String) {
    s.push_str("<form class=\"filter\" onsubmit=\"return false\" aria-label=\"filter\">");
    let lists: [(&str, &str, Vec<&str>); 3] = [
        ("lib", "library", site.adapters.iter().map(String::as_str).collect()),
        (
            "scenario",
            "scenario",
            site.scenarios.iter().map(|(s, _)| s.as_str()).collect(),
        ),
        ("bus", "bus", site.buses.iter().map(String::as_str).collect()),
    ];
    for (key, label, values) in lists {
        let _ = write!(
            s,
            "<label for=\"f-{key}\">{label}<input id=\"f-{key}\" type=\"search\" list=\"l-{key}\" \
             placeholder=\"any {label}\" autocomplete=\"off\"></label><datalist id=\"l-{key}\">"
        );
        for v in values {
            let _ = write!(s, "<option value=\"{}\">", esc(v));
        }
        s.push_str("</datalist>");
    }
    s.push_str("</form>\n");
}
