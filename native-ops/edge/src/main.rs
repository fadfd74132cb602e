//! machined-edge: the API's network edge (see docs/api.md). Terminates TLS 1.3
//! with a mandatory client certificate from the node CA, serves HTTP/2 and
//! HTTP/1.1 on one port, and forwards every request, undecoded, to machined's
//! internal server on its Unix socket with the verified caller in
//! `x-machined-*` headers. RBAC, reflection, metrics and message limits are
//! machined's. It holds no CA key. Prints one JSON line `{"apid":"ready",...}`
//! on stdout once listening; exits 0 on SIGTERM/SIGINT or when its parent is
//! gone, 1 when it cannot start, 2 on bad flags.

mod admission;
mod alert_delay;
mod body;
mod budget;
mod fanout;
mod handshakes;
mod identity;
mod listen;
mod metrics;
mod options;
mod proxy;
mod request_body;
mod server;
mod tls;
mod upstream_pool;
mod verifier;

use std::sync::Arc;
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--print-defaults") {
        println!("{}", options::defaults_json());
        return;
    }
    let options = match options::parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("machined-edge: {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.threads)
        .max_blocking_threads(1)
        .enable_all()
        .build();
    let code = match runtime {
        Ok(rt) => rt.block_on(run(options)),
        Err(e) => {
            eprintln!("machined-edge: cannot start the runtime: {e}");
            1
        }
    };
    std::process::exit(code);
}

async fn run(options: options::Options) -> i32 {
    let metrics = Arc::new(metrics::Metrics::default());
    if options.watch_fanout == options::WatchFanout::Edge {
        fanout::install(&options, metrics.clone());
    }
    let pki = match tls::load(&options.pki_dir, metrics.clone()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("machined-edge: {e}");
            return 1;
        }
    };
    let listener = match listen::bind(options.listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("machined-edge: cannot listen on {}: {e}", options.listen);
            return 1;
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let (stop_tx, stop_rx) = watch::channel(false);
    let shared = Arc::new(server::Shared::new(
        options.clone(),
        TlsAcceptor::from(pki.config),
        pki.maintenance,
        metrics.clone(),
    ));
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        eprintln!("machined-edge: cannot listen for signals");
        return 1;
    };
    println!(
        "{{\"apid\":\"ready\",\"impl\":\"machined-edge\",\"pid\":{},\"port\":{},\"hostname\":\"{}\"{}}}",
        std::process::id(),
        port,
        options.listen.ip(),
        if pki.maintenance { ",\"maintenance\":true" } else { "" }
    );
    let serving = tokio::spawn(server::serve(listener, shared.clone(), stop_rx));
    let why = loop {
        tokio::select! {
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
            _ = parent_gone() => break "parent exit",
            _ = hup.recv() => reload(&options.pki_dir, &shared, &metrics),
        }
    };
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(2), serving).await;
    // The listener is closed; each connection got GOAWAY and finishes what it
    // has in flight (server::DRAIN at most). Wait for them, inside the
    // supervisor's 5 s before SIGKILL, so a restart (a re-issued certificate)
    // never cuts a call that was already answered or being answered.
    let drained = drain(&shared, server::DRAIN + Duration::from_millis(250)).await;
    eprintln!("machined-edge: stopped on {why} ({drained})");
    0
}

/// SIGHUP: read the PKI directory again (machined rewrote it) for new
/// connections; on an error keep serving what was loaded, and say so.
fn reload(dir: &str, shared: &server::Shared, metrics: &Arc<metrics::Metrics>) {
    match tls::load(dir, metrics.clone()) {
        Ok(p) => {
            shared.reload(TlsAcceptor::from(p.config), p.maintenance);
            eprintln!(
                "machined-edge: reloaded {dir}{}",
                if p.maintenance { " (maintenance)" } else { "" }
            );
        }
        Err(e) => eprintln!("machined-edge: reload of {dir} failed, kept the old one: {e}"),
    }
}

/// Waits until no client connection is open, or `limit`; says which.
async fn drain(shared: &server::Shared, limit: Duration) -> String {
    let started = tokio::time::Instant::now();
    while shared.metrics.open() > 0 && started.elapsed() < limit {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match shared.metrics.open() {
        0 => format!("drained in {} ms", started.elapsed().as_millis()),
        n => format!(
            "{n} connections cut after {} ms",
            started.elapsed().as_millis()
        ),
    }
}

/// machined gone (re-parented): stop rather than serve with no upstream.
async fn parent_gone() {
    // SAFETY: getppid has no preconditions and cannot fail.
    let parent = unsafe { libc::getppid() };
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        // SAFETY: as above.
        if unsafe { libc::getppid() } != parent {
            return;
        }
    }
}
