//! The compare view: any two runs of the site picked in the page. The
//! verdicts are computed here, in Rust, by `analyze::compare` (the code of
//! `dbus-matrix compare`, same threshold and α) for every ordered pair of
//! runs, and embedded as JSON (a letter per cell key per pair); the page's
//! script only looks them up and draws the table. So the page cannot
//! disagree with `compare`: it holds its output.

use std::collections::BTreeMap;
use std::fmt::Write;

use harness::results::CellKey;
use serde::Serialize;

use super::model::Site;
use super::page::page;
use crate::analyze::compare::{self, CompareOptions, Verdict};

/// One letter per verdict (`.`: neither run has the cell).
fn letter(v: Verdict) -> char {
    match v {
        Verdict::Broken => 'B',
        Verdict::Missing => 'M',
        Verdict::Dropped => 'D',
        Verdict::Regressed => 'R',
        Verdict::Improved => 'I',
        Verdict::Unchanged => 'U',
        Verdict::Fixed => 'F',
        Verdict::Changed => 'C',
    }
}

#[derive(Serialize)]
struct Data {
    threshold: f64,
    alpha: f64,
    runs: Vec<String>,
    /// adapter, scenario, bus ("" for none), role suffix.
    keys: Vec<[String; 4]>,
    /// Per run, per key: the median in ns of an ok cell.
    ns: Vec<Vec<Option<f64>>>,
    /// Per run, a letter per key: o ok, u unsupported, f failed, . absent.
    status: Vec<String>,
    /// "OLD-NEW" (run indices): a verdict letter per key, and what differs.
    pairs: BTreeMap<String, Pair>,
}

#[derive(Serialize)]
struct Pair {
    v: String,
    d: Vec<String>,
}

fn data(site: &Site) -> anyhow::Result<Data> {
    let mut keys: Vec<&CellKey> = site.runs.iter().flat_map(|r| r.cells.keys()).collect();
    keys.sort();
    keys.dedup();
    let index: BTreeMap<&CellKey, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let opts = CompareOptions {
        threshold: site.settings.threshold,
        alpha: site.settings.alpha,
        adapters: Vec::new(),
        scenarios: Vec::new(),
        buses: Vec::new(),
        allow_missing: false,
    };
    let mut pairs = BTreeMap::new();
    for (a, old) in site.runs.iter().enumerate() {
        for (b, new) in site.runs.iter().enumerate() {
            if a == b {
                continue;
            }
            let c = compare::compare(old.r, new.r, &opts)?;
            let mut v = vec!['.'; keys.len()];
            for cell in &c.cells {
                let key = CellKey {
                    adapter: cell.adapter.clone(),
                    scenario: cell.scenario.clone(),
                    bus: cell.bus.clone(),
                    role: cell.role,
                };
                let i = index
                    .get(&key)
                    .ok_or_else(|| anyhow::anyhow!("internal: compare returned a cell no run has"))?;
                v[*i] = letter(cell.verdict);
            }
            pairs.insert(
                format!("{a}-{b}"),
                Pair {
                    v: v.into_iter().collect(),
                    d: c.differences,
                },
            );
        }
    }
    Ok(Data {
        threshold: site.settings.threshold,
        alpha: site.settings.alpha,
        runs: site
            .runs
            .iter()
            .enumerate()
            .map(|(j, r)| format!("#{} {} ({})", j + 1, r.title(), r.label))
            .collect(),
        keys: keys
            .iter()
            .map(|k| {
                [
                    k.adapter.clone(),
                    k.scenario.clone(),
                    k.bus.clone().unwrap_or_default(),
                    k.role.label_suffix().to_string(),
                ]
            })
            .collect(),
        ns: site
            .runs
            .iter()
            .map(|r| {
                keys.iter()
                    .map(|k| r.cells.get(*k).and_then(|c| c.median_ns()))
                    .collect()
            })
            .collect(),
        status: site
            .runs
            .iter()
            .map(|r| {
                keys.iter()
                    .map(|k| match r.cells.get(*k).map(|c| c.status()) {
                        None => '.',
                        Some(s) => match crate::export::model::table::status_word(s) {
                            "ok" => 'o',
                            "unsupported" => 'u',
                            _ => 'f',
                        },
                    })
                    .collect()
            })
            .collect(),
        pairs,
    })
}

const SCRIPT: &str = r#"
var D = JSON.parse(document.getElementById('site-data').textContent);
var WORD = {B: 'broken', M: 'missing', D: 'dropped', R: 'regressed', I: 'improved', U: 'unchanged', F: 'fixed', C: 'changed'};
var ORDER = 'BMDRIUFC';
var STATUS = {o: 'ok', u: 'unsupported', f: 'failed', '.': 'absent'};
function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
function dur(ns) {
  var v = ns, u = 'ns';
  if (ns >= 1e9) { v = ns / 1e9; u = 's'; } else if (ns >= 1e6) { v = ns / 1e6; u = 'ms'; } else if (ns >= 1e3) { v = ns / 1e3; u = 'µs'; }
  return v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) + ' ' + u;
}
var oldSel = document.getElementById('old'), newSel = document.getElementById('new'), hide = document.getElementById('hide-unchanged');
D.runs.forEach(function (label, i) {
  [oldSel, newSel].forEach(function (s) { var o = document.createElement('option'); o.value = String(i); o.textContent = label; s.appendChild(o); });
});
var n = D.runs.length, pick = /^#(\d+)-(\d+)$/.exec(location.hash);
oldSel.value = String(pick ? Math.min(+pick[1], n) - 1 : Math.max(n - 2, 0));
newSel.value = String(pick ? Math.min(+pick[2], n) - 1 : n - 1);
function draw() {
  var a = +oldSel.value, b = +newSel.value, body = document.getElementById('cmp-body');
  var sum = document.getElementById('cmp-summary'), diff = document.getElementById('cmp-diff');
  document.body.setAttribute('data-pair', a + '-' + b);
  if (a === b) { sum.textContent = 'Pick two different runs.'; body.innerHTML = ''; diff.innerHTML = ''; return; }
  var p = D.pairs[a + '-' + b], rows = [], count = {};
  for (var i = 0; i < p.v.length; i++) {
    var v = p.v.charAt(i);
    if (v === '.') continue;
    count[v] = (count[v] || 0) + 1;
    if (hide.checked && v === 'U') continue;
    rows.push(i);
  }
  rows.sort(function (x, y) { return ORDER.indexOf(p.v.charAt(x)) - ORDER.indexOf(p.v.charAt(y)) || x - y; });
  var html = [];
  rows.forEach(function (i) {
    var k = D.keys[i], v = p.v.charAt(i), o = D.ns[a][i], w = D.ns[b][i];
    var cells = (o !== null && w !== null)
      ? '<td class="num">' + dur(o) + '</td><td class="num">' + dur(w) + '</td><td class="num">' + (w / o).toFixed(3) + '×</td>'
      : '<td>' + STATUS[D.status[a].charAt(i)] + '</td><td>' + STATUS[D.status[b].charAt(i)] + '</td><td></td>';
    html.push('<tr data-lib="' + esc(k[0]) + '" data-scenario="' + esc(k[1]) + '" data-bus="' + esc(k[2]) + '" data-key="' + i + '">' +
      '<td>' + esc(k[0]) + '</td><td>' + esc(k[1] + k[3]) + '</td><td>' + esc(k[2]) + '</td>' + cells +
      '<td class="v-' + WORD[v] + '">' + WORD[v] + '</td></tr>');
  });
  body.innerHTML = html.join('');
  var c = function (l) { return count[l] || 0; };
  sum.textContent = (c('R') + c('B')) + ' regressed or broken, ' + c('M') + ' missing, ' + c('D') + ' dropped, ' +
    (c('I') + c('F')) + ' improved or fixed, ' + c('U') + ' unchanged, ' + c('C') + ' changed status (threshold ' +
    (D.threshold * 100).toFixed(1) + '%, α = ' + D.alpha + ').';
  diff.innerHTML = p.d.length ? '<p class="warn">Not like for like: these differ between the runs:</p><ul>' +
    p.d.map(function (d) { return '<li>' + esc(d) + '</li>'; }).join('') + '</ul>' : '';
  try { history.replaceState(null, '', '#' + (a + 1) + '-' + (b + 1)); } catch (e) { /* some hosts refuse it */ }
  siteFilter();
}
[oldSel, newSel, hide].forEach(function (el) { el.addEventListener('change', draw); });
draw();
"#;

pub fn render(site: &Site) -> anyhow::Result<String> {
    let json = serde_json::to_string(&data(site)?)?.replace("</", "<\\/");
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>Compare two runs</h1>\n<p class=\"explain\">The verdicts are those of <code>dbus-matrix compare OLD NEW</code> \
         (threshold {:.1}%, α = {}), computed when the site was built for every pair of runs. Rows sort worst first; \
         the filter above applies.</p>\n\
         <form class=\"filter\" onsubmit=\"return false\"><label for=\"old\">old run<select id=\"old\"></select></label>\
         <label for=\"new\">new run<select id=\"new\"></select></label>\
         <label for=\"hide-unchanged\">hide unchanged<input id=\"hide-unchanged\" type=\"checkbox\" checked></label></form>\n\
         <p id=\"cmp-summary\" aria-live=\"polite\"></p><div id=\"cmp-diff\"></div>\n\
         <div class=\"scroll\"><table id=\"cmp\"><thead><tr><th>adapter</th><th>scenario</th><th>bus</th><th>old</th>\
         <th>new</th><th>new/old</th><th>verdict</th></tr></thead><tbody id=\"cmp-body\"></tbody></table></div>\n\
         <script type=\"application/json\" id=\"site-data\">{json}</script>\n",
        site.settings.threshold * 100.0,
        site.settings.alpha
    );
    Ok(page(site, "dbus-matrix · compare two runs", &body, SCRIPT))
}
