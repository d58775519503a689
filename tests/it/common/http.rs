//! A small HTTP/1.1 server on 127.0.0.1 for download tests: static files with
//! `Range` support, and switches that make it misbehave the ways real servers
//! do (cut the connection after N bytes, answer 404/403/503, send HTML,
//! redirect in a loop, ignore ranges). It also answers proxy-style requests
//! (`GET http://host:port/path`), so a test can point `HTTP_PROXY` at it.
//! Every request is logged, so tests assert what the client really asked.
//! It never connects anywhere; it only listens on a loopback port.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

/// One request as the server saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub method: String,
    /// The path (query kept), also for proxy-style absolute-form requests.
    pub path: String,
    /// The `Range` header, if any.
    pub range: Option<String>,
    /// True when the request line held a full URL (the client used us as a proxy).
    pub proxied: bool,
    /// The `Host` header.
    pub host: Option<String>,
}

/// What a path answers.
#[derive(Clone, Debug, Default)]
pub struct Route {
    pub status: u16,
    pub body: Vec<u8>,
    pub content_type: String,
    pub location: Option<String>,
    /// Cut the connection after this many body bytes …
    pub cut_after: u64,
    /// … for this many of the next responses.
    pub cut_times: u32,
    /// Then answer this status instead …
    pub fail_status: u16,
    /// … for this many of the requests after the cut ones.
    pub fail_times: u32,
    /// Answer 200 with the whole body even when a range is asked for.
    pub ignore_range: bool,
    /// Send this many bytes of the body, then wait at the gate until the
    /// test opens it (at most a minute), then send the rest.
    pub hold: Option<(u64, Gate)>,
    /// Answer 200 with a body that never ends (no length given, zeros until
    /// the client hangs up), counting what was sent in [`TestServer::sent`].
    pub endless: bool,
}

/// Where a held response waits (see [`Route::hold`]).
#[derive(Clone, Debug, Default)]
pub struct Gate(Arc<(Mutex<(bool, bool)>, Condvar)>);

impl Gate {
    /// Lets every response waiting here (and later ones) go on.
    pub fn open(&self) {
        let (m, c) = &*self.0;
        m.lock().unwrap().1 = true;
        c.notify_all();
    }

    /// Waits until a response has sent its first part and waits here.
    pub fn wait_reached(&self) {
        let (m, c) = &*self.0;
        let g = m.lock().unwrap();
        let (g, _) = c
            .wait_timeout_while(g, Duration::from_secs(60), |s| !s.0)
            .unwrap();
        assert!(g.0, "no response reached the gate");
    }

    fn pass(&self) {
        let (m, c) = &*self.0;
        let mut g = m.lock().unwrap();
        g.0 = true;
        c.notify_all();
        let _ = c
            .wait_timeout_while(g, Duration::from_secs(60), |s| !s.1)
            .unwrap();
    }
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Route>,
    log: Vec<Request>,
    sent: u64,
}

/// The running server; it stops accepting when dropped.
pub struct TestServer {
    port: u16,
    state: Arc<Mutex<State>>,
    stop: Arc<Mutex<bool>>,
}

impl TestServer {
    pub fn start() -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(Mutex::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        thread::spawn(move || {
            for conn in listener.incoming() {
                if *sp.lock().unwrap() {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                thread::spawn(move || {
                    let _ = serve(conn, &st);
                });
            }
        });
        TestServer { port, state, stop }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT/` + `path` (without its leading `/`).
    pub fn url(&self, path: &str) -> String {
        format!(
            "http://127.0.0.1:{}/{}",
            self.port,
            path.trim_start_matches('/')
        )
    }

    pub fn route(&self, path: &str, route: Route) {
        self.state.lock().unwrap().routes.insert(norm(path), route);
    }

    /// Changes the route at `path` in place.
    pub fn edit(&self, path: &str, f: impl FnOnce(&mut Route)) {
        let mut s = self.state.lock().unwrap();
        f(s.routes
            .get_mut(&norm(path))
            .unwrap_or_else(|| panic!("no route {path}")));
    }

    /// Serves `body` at `path` as a binary file.
    pub fn file(&self, path: &str, body: Vec<u8>) {
        self.route(
            path,
            Route {
                status: 200,
                body,
                content_type: "application/octet-stream".into(),
                ..Default::default()
            },
        );
    }

    /// Serves `body` at `path` as `text/html`.
    pub fn html(&self, path: &str, body: &str) {
        self.route(
            path,
            Route {
                status: 200,
                body: body.as_bytes().to_vec(),
                content_type: "text/html; charset=utf-8".into(),
                ..Default::default()
            },
        );
    }

    /// Answers `status` (with a small HTML body) at `path`.
    pub fn status(&self, path: &str, status: u16) {
        self.route(
            path,
            Route {
                status,
                body: format!("<html><body>{status}</body></html>").into_bytes(),
                content_type: "text/html".into(),
                ..Default::default()
            },
        );
    }

    /// Answers `302 Found` with `Location: to`.
    pub fn redirect(&self, path: &str, to: &str) {
        self.route(
            path,
            Route {
                status: 302,
                location: Some(to.into()),
                content_type: "text/plain".into(),
                ..Default::default()
            },
        );
    }

    /// Serves a body that never ends at `path` ([`Route::endless`]).
    pub fn endless(&self, path: &str) {
        self.route(
            path,
            Route {
                status: 200,
                content_type: "application/octet-stream".into(),
                endless: true,
                ..Default::default()
            },
        );
    }

    /// Body bytes sent so far by endless routes.
    pub fn sent(&self) -> u64 {
        self.state.lock().unwrap().sent
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().log.clone()
    }

    /// Requests for `path`.
    pub fn requests_for(&self, path: &str) -> Vec<Request> {
        let p = norm(path);
        self.requests()
            .into_iter()
            .filter(|r| r.path == p)
            .collect()
    }

    /// Number of GETs of `path`.
    pub fn hits(&self, path: &str) -> usize {
        self.requests_for(path).len()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        *self.stop.lock().unwrap() = true;
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A loopback port with nothing listening (connections are refused).
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = l.local_addr().unwrap().port();
    drop(l);
    p
}

fn norm(path: &str) -> String {
    format!("/{}", path.trim_start_matches('/'))
}

fn serve(conn: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let (path, proxied) = match target.strip_prefix("http://") {
        Some(rest) => (
            rest.find('/')
                .map(|i| rest[i..].to_string())
                .unwrap_or_else(|| "/".into()),
            true,
        ),
        None => (target, false),
    };
    let mut range = None;
    let mut host = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            match k.trim().to_ascii_lowercase().as_str() {
                "range" => range = Some(v.trim().to_string()),
                "host" => host = Some(v.trim().to_string()),
                _ => {}
            }
        }
    }
    enum Mode {
        Normal,
        Cut,
        Fail,
    }
    let found = {
        let mut s = state.lock().unwrap();
        s.log.push(Request {
            method: method.clone(),
            path: path.clone(),
            range: range.clone(),
            proxied,
            host,
        });
        s.routes.get_mut(&path).map(|r| {
            // A cut comes first, then failures: "cut once, then down" is one route.
            let mode = if r.cut_times > 0 {
                r.cut_times -= 1;
                Mode::Cut
            } else if r.fail_times > 0 {
                r.fail_times -= 1;
                Mode::Fail
            } else {
                Mode::Normal
            };
            (r.clone(), mode)
        })
    };
    let mut out = conn;
    let Some((route, mode)) = found else {
        return respond(&mut out, 404, "text/plain", &[], b"not found", None, None);
    };
    if matches!(mode, Mode::Fail) {
        return respond(
            &mut out,
            route.fail_status,
            "text/plain",
            &[],
            b"try again later",
            None,
            None,
        );
    }
    if let Some(loc) = &route.location {
        return respond(
            &mut out,
            route.status,
            &route.content_type,
            &[("Location", loc.clone())],
            b"",
            None,
            None,
        );
    }
    if route.endless {
        out.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        )?;
        let chunk = vec![0u8; 64 << 10];
        loop {
            out.write_all(&chunk)?;
            state.lock().unwrap().sent += chunk.len() as u64;
        }
    }
    if route.status != 200 {
        return respond(
            &mut out,
            route.status,
            &route.content_type,
            &[],
            &route.body,
            None,
            None,
        );
    }
    let len = route.body.len() as u64;
    let start = range
        .as_deref()
        .filter(|_| !route.ignore_range)
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<u64>().ok());
    let cut = matches!(mode, Mode::Cut).then_some(route.cut_after);
    let hold = route.hold.as_ref();
    match start {
        Some(s) if s >= len => respond(
            &mut out,
            416,
            "text/plain",
            &[("Content-Range", format!("bytes */{len}"))],
            b"",
            None,
            None,
        ),
        Some(s) => respond(
            &mut out,
            206,
            &route.content_type,
            &[("Content-Range", format!("bytes {s}-{}/{len}", len - 1))],
            &route.body[s as usize..],
            cut,
            hold,
        ),
        None => respond(
            &mut out,
            200,
            &route.content_type,
            &[("Accept-Ranges", "bytes".into())],
            &route.body,
            cut,
            hold,
        ),
    }
}

fn respond(
    out: &mut TcpStream,
    status: u16,
    content_type: &str,
    headers: &[(&str, String)],
    body: &[u8],
    cut_after: Option<u64>,
    hold: Option<&(u64, Gate)>,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        206 => "Partial Content",
        302 => "Found",
        403 => "Forbidden",
        404 => "Not Found",
        416 => "Range Not Satisfiable",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    match cut_after {
        Some(n) => {
            out.write_all(&body[..(n as usize).min(body.len())])?;
            out.flush()?;
            // Drop the connection mid-body, as a flaky link or a killed server does.
            out.shutdown(Shutdown::Both)
        }
        None => {
            if let Some((at, gate)) = hold {
                let at = (*at as usize).min(body.len());
                out.write_all(&body[..at])?;
                out.flush()?;
                gate.pass();
                out.write_all(&body[at..])?;
            } else {
                out.write_all(body)?;
            }
            out.flush()
        }
    }
}
