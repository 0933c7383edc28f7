//! `dbus-matrix report --format html`: a smoke run (fault adapters, the raw
//! baseline, dbus-daemon and p2p) rendered as one page that loads nothing
//! from the network, which headless Chromium renders (screenshot, DOM) with
//! its inline script run and no console errors. Needs Debian's `chromium`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use harness::results::CellStatus;

const SCENARIOS: &[&str] = &[
    "marshal/mixed",
    "demarshal/mixed",
    "call/void",
    "call/echo-bytes/1",
    "call/echo-bytes/1024",
    "call/echo-bytes/32768",
    "property/get",
    "baseline/raw-socket/1",
    "baseline/raw-socket/1024",
    "baseline/raw-socket/32768",
];

fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "chromium is not on PATH: install Debian's chromium \
                 (`apt-get install chromium`, or scripts/install-deps-debian.sh all)"
            )
        })
}

/// Runs `c` in its own process group; kills the group after `limit`.
fn output_within(mut c: Command, limit: Duration) -> Output {
    use std::os::unix::process::CommandExt;
    let child = c
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let pid = child.id() as i32;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if start.elapsed() > limit {
                    // SAFETY: the process group this test started.
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                    return true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            false
        })
    };
    let o = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(!watchdog.join().unwrap(), "chromium took over {limit:?}");
    // Helpers (zygote, GPU, network service) that outlived the browser.
    // SAFETY: as above.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    o
}

fn chromium_command(chromium: &Path, dir: &Path) -> Command {
    let mut c = Command::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1400,2400",
    ])
    .arg(format!("--user-data-dir={}", dir.join("chromium-profile").display()));
    c.env("HOME", dir);
    c
}

/// Console errors in Chromium's log (`...:CONSOLE(12)] "Uncaught ..."`).
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("Uncaught") || l.to_lowercase().contains("error")))
        .collect()
}

/// Every src= and href= value: none may point at the network.
fn network_references(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in ["src=", "href="] {
        for (i, _) in html.match_indices(attr) {
            let value: String = html[i + attr.len()..]
                .trim_start_matches(['"', '\''])
                .chars()
                .take_while(|c| !matches!(c, '"' | '\'' | ' ' | '>'))
                .collect();
            let v = value.to_ascii_lowercase();
            if v.starts_with("http:") || v.starts_with("https:") || v.starts_with("//") || v.contains("://") {
                found.push(format!("{attr}{value}"));
            }
        }
    }
    for bad in ["@import", "url(http", "url(//", "<link"] {
        if html.contains(bad) {
            found.push(bad.to_string());
        }
    }
    found
}

#[test]
fn the_html_report_renders_in_chromium() {
    chromium();
    let setup = fault_setup_with_buses("html", &["fault-ok", "fault-exit"], SCENARIOS, &["dbus-daemon", "p2p"]);
    // The raw baseline, for the floor table and the floor lines.
    std::os::unix::fs::symlink(bin_dir().join("adapter-raw"), setup.bin_dir.join("adapter-raw")).unwrap();
    let raw = format!(
        "[[adapter]]\nid = \"raw\"\npackage = \"adapter-raw\"\npath = \"{}\"\nlibrary = \"raw\"\nbaseline = true\n",
        workspace().join("adapters/raw").display()
    );
    let toml =
        std::fs::read_to_string(&setup.matrix)
            .unwrap()
            .replacen("[profile.smoke]", &(raw + "[profile.smoke]"), 1);
    std::fs::write(&setup.matrix, toml).unwrap();

    let o = setup.smoke_command().output().unwrap();
    assert_eq!(o.status.code(), Some(1), "fault-exit's codec cells fail:\n{}", text(&o));
    let results = results_file(&setup.out());
    let r = validate(&results);
    assert_eq!(
        cell_on(&r, "fault-ok", "call/echo-bytes/1024", Some("dbus-daemon")).status(),
        CellStatus::Ok
    );
    assert_eq!(
        cell_on(&r, "raw", "baseline/raw-socket/1024", None).status(),
        CellStatus::Ok
    );
    assert_eq!(
        cell_on(&r, "fault-exit", "marshal/mixed", None).status(),
        CellStatus::Failed
    );
    assert_eq!(
        cell_on(&r, "fault-ok", "call/void", Some("p2p")).status(),
        CellStatus::Unsupported
    );

    let html = html_page(&results);
    // Codec: marshal/mixed, demarshal/mixed. IPC by bus: call/void and the
    // three echo sizes (property/get is unsupported everywhere: no chart).
    // Message size: latency and throughput on dbus-daemon (nothing ran p2p).
    let charts = html.matches("<svg class=\"chart\"").count();
    assert_eq!(charts, 2 + 4 + 2, "charts in the page");
    assert!(html.contains("injected library error"), "the failure's reason");
    assert!(html.contains("class=\"failed\"") && html.contains("class=\"unsupported\""));
    assert!(html.contains("id=\"note-1\""));

    render_in_chromium(&html, charts, "html_report");
}

/// `report --format html` of `file`, which must load nothing from the network.
fn html_page(file: &Path) -> String {
    let o = dbus_matrix(&["report", file.to_str().unwrap(), "--format", "html"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let html = String::from_utf8(o.stdout).unwrap();
    let network = network_references(&html);
    assert!(network.is_empty(), "the page refers to the network: {network:?}");
    html
}

/// Renders `html` in headless chromium: a screenshot that is not blank, the
/// inline script run over all `charts`, and no console errors. Files go to
/// `$TMPDIR/dbus-matrix-html-<name>` (report.html, report.png, dom.html): a
/// directory of run time, since the Nix sandbox's build user may not write
/// where the binary was compiled.
fn render_in_chromium(html: &str, charts: usize, name: &str) {
    let chromium = chromium();
    let dir = std::env::temp_dir().join(format!("dbus-matrix-html-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    std::fs::write(&page, html).unwrap();
    let url = format!("file://{}", page.display());
    let png = dir.join("report.png");

    let mut c = chromium_command(&chromium, &dir);
    c.arg(format!("--screenshot={}", png.display())).arg(&url);
    let shot = output_within(c, Duration::from_secs(180));
    let shot_err = String::from_utf8_lossy(&shot.stderr).to_string();
    assert!(
        png.is_file(),
        "{} wrote no screenshot ({:?}):\n{shot_err}",
        chromium.display(),
        shot.status
    );
    let size = std::fs::metadata(&png).unwrap().len();
    assert!(size > 20_000, "the screenshot is only {size} bytes: blank page?");
    println!("screenshot: {}", png.display());

    let mut c = chromium_command(&chromium, &dir);
    c.arg("--dump-dom").arg(&url);
    let dom = output_within(c, Duration::from_secs(180));
    let dom_err = String::from_utf8_lossy(&dom.stderr).to_string();
    let dom_text = String::from_utf8_lossy(&dom.stdout).to_string();
    assert!(
        dom_text.contains(&format!("data-rendered=\"{charts}\"")),
        "the inline script did not run or counted other than {charts} charts ({:?}):\n{}\n{dom_err}",
        dom.status,
        dom_text.chars().take(600).collect::<String>()
    );
    std::fs::write(dir.join("dom.html"), &dom_text).unwrap();

    for (what, log) in [("screenshot", &shot_err), ("dump-dom", &dom_err)] {
        let errors = console_errors(log);
        assert!(errors.is_empty(), "console errors ({what}):\n{}", errors.join("\n"));
    }
}

/// The committed quick run of the whole matrix (1007 cells, docs/results/):
/// a real page of every table and chart renders too.
#[test]
fn the_committed_quick_run_renders_in_chromium() {
    chromium();
    let file = repo_root().join("docs/results/2026-11-23-quick.json");
    let r = validate(&file);
    assert_eq!(r.run.profile, "quick");
    assert!(r.cells.len() > 1000, "{} cells", r.cells.len());
    let html = html_page(&file);
    let charts = html.matches("<svg class=\"chart\"").count();
    // 8 codec charts, 29 IPC scenarios with a chart each, message-size curves.
    assert!(charts >= 40, "only {charts} charts");
    render_in_chromium(&html, charts, "html_report_quick");
}

#[test]
fn network_references_are_found() {
    assert!(network_references("<a href=\"#note-1\">1</a>").is_empty());
    assert_eq!(
        network_references("<img src=\"https://x/y.png\"><a href='http://e'>"),
        ["src=https://x/y.png", "href=http://e"]
    );
    assert_eq!(
        console_errors("a\n[1:2:INFO:CONSOLE(3)] \"Uncaught TypeError: x\"\nb"),
        ["[1:2:INFO:CONSOLE(3)] \"Uncaught TypeError: x\""]
    );
}
