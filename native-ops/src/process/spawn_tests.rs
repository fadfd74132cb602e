//! Tests of the spawner: PATH lookup, stdio names, and a child that outlives
//! the thread that asked for it.

use super::*;

#[test]
fn resolves_on_path() {
    let env = vec!["PATH=/nonexistent:/bin:/usr/bin".to_string()];
    assert!(resolve_program("sh", &env).unwrap().ends_with("/sh"));
    assert_eq!(resolve_program("/x/y", &env).unwrap(), "/x/y");
    let e = resolve_program("no-such-program-here", &env).unwrap_err();
    assert_eq!((e.op.as_str(), e.errno), ("execve", libc::ENOENT));
}

fn spec(argv: &[&str], death: Option<i32>) -> SpawnSpec {
    SpawnSpec {
        path: argv[0].to_string(),
        argv: argv.iter().map(|a| a.to_string()).collect(),
        env: vec!["PATH=/bin:/usr/bin".to_string()],
        cwd: None,
        uid: None,
        gid: None,
        groups: None,
        new_session: true,
        new_process_group: false,
        no_new_privs: false,
        seccomp: Profile::Unconfined,
        read_only_paths: Vec::new(),
        masked_paths: Vec::new(),
        keep_caps: None,
        parent_death_signal: death,
        cgroup: None,
        stdout: Stdio::Null,
        stderr: Stdio::Null,
    }
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence; zombies count as gone via /proc state.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    exists && !state.contains(") Z ")
}

#[test]
fn child_with_death_signal_outlives_the_calling_thread() {
    // The calling thread ends at once; the fork happened on the spawner
    // thread, so the parent-death signal must not fire.
    let child = std::thread::spawn(|| {
        spawn_on_spawner_thread(spec(&["sleep", "30"], Some(libc::SIGKILL))).unwrap()
    })
    .join()
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        alive(child.pid),
        "child {} died with its calling thread",
        child.pid
    );
    // SAFETY: our own child.
    unsafe { libc::kill(child.pid, libc::SIGKILL) };
}

#[test]
fn stdio_names() {
    assert_eq!(Stdio::parse(None).unwrap(), Stdio::Pipe);
    assert_eq!(Stdio::parse(Some("bogus")).unwrap_err().errno, libc::EINVAL);
}
