//! bash in its sandbox, end to end on this kernel: every way out of the workspace a command
//! might try (write, append, truncate, remove, move, links, `/proc/self/root`, children),
//! each checked by its outcome and by what is still outside; read-only, extra writable
//! directories, temp directories, the network switch against a loopback listener, the line a
//! refused command gets, and what a kernel without Landlock or seccomp is told. The outside
//! directory is under `/var/tmp`, not `/tmp`, which commands may write.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{json, Value};

use crate::util::{Output, TestDir};

/// A directory outside the workspace and outside every temp directory.
struct Outside {
    root: PathBuf,
}

impl Outside {
    fn new() -> Outside {
        static N: AtomicUsize = AtomicUsize::new(0);
        // `/var/tmp`: not a temp directory the sandbox opens (those are `/tmp` and `$TMPDIR`,
        // which the tests do not set), wherever the repository was checked out.
        let root = Path::new("/var/tmp").join(format!(
            "zero-e2e-sandbox-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("kept.txt"), "original\n").unwrap();
        Outside { root }
    }

    fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    /// The directory's files and their contents, to compare before and after.
    fn snapshot(&self) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = std::fs::read_dir(&self.root)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(e.path()).unwrap_or_default())
            })
            .collect();
        files.sort();
        files
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// One turn of bash calls (ids c0, c1, ...) at `--auto high`, then an answer: the run, not
/// yet made.
fn bash_zero(dir: &TestDir, commands: &[String], args: &[&str]) -> crate::util::Zero {
    let calls: Vec<Value> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"id": format!("c{i}"), "name": "bash", "arguments": {"command": c}}))
        .collect();
    let script = dir.script(&json!({"turns": [{"toolCalls": calls}, {"text": "done"}]}));
    let script = script.display().to_string();
    dir.zero()
        .args(&["exec", "-o", "stream-json", "--schema-version", "2", "--auto", "high"])
        .args(&["--script", &script])
        .args(args)
        .args(&["go"])
}

fn bash(dir: &TestDir, commands: &[String], args: &[&str]) -> Output {
    bash_zero(dir, commands, args).run()
}

/// Each call's exit code and output.
fn results(out: &Output) -> Vec<(Option<i64>, String)> {
    out.stream();
    results_in(&out.stdout)
}

fn results_in(stdout: &str) -> Vec<(Option<i64>, String)> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["exitCode"].as_i64(), e["output"].as_str().unwrap_or_default().to_string()))
        .collect()
}

const REFUSED: &str =
    "[sandbox: writes outside the workspace are refused (--sandbox workspace-write)]";

#[test]
fn writes_out_of_the_workspace_are_refused_every_way() {
    let dir = TestDir::new("sandbox-ways");
    let outside = Outside::new();
    dir.write("work/inside.txt", "inside\n");
    let before = outside.snapshot();
    let (kept, new) = (outside.path("kept.txt"), outside.path("new.txt"));
    let commands = [
        format!("echo x > {new}"),
        format!("echo x >> {kept}"),
        format!(": > {kept}"),
        format!("truncate -s 0 {kept}"),
        format!("rm {kept}"),
        format!("mv inside.txt {}", outside.root.display()),
        format!("mv {kept} moved.txt"),
        format!("ln -s {kept} link.txt && echo x > link.txt"),
        format!("ln {kept} hard.txt"),
        format!("echo x > /proc/self/root{new}"),
        format!("sh -c 'sh -c \"echo x > {new}\"'"),
        format!("mkdir {}", outside.path("sub")),
    ];
    let out = bash(&dir, &commands, &[]);
    out.assert_code(0);
    let results = results(&out);
    for (i, (code, output)) in results.iter().enumerate() {
        assert_ne!(*code, Some(0), "{} ran: {output}", commands[i]);
    }
    // Each says why, but the hard link (refused as a cross-directory link: EXDEV).
    let noted: Vec<bool> = results.iter().map(|(_, o)| o.ends_with(REFUSED)).collect();
    assert_eq!(
        noted,
        [true, true, true, true, true, true, true, true, false, true, true, true],
        "{results:#?}"
    );
    assert_eq!(outside.snapshot(), before, "something outside changed");
    assert_eq!(crate::util::read(&dir.path("work/inside.txt")), "inside\n");
    assert!(!dir.path("work/moved.txt").exists() && !dir.path("work/hard.txt").exists());
}

#[test]
fn the_workspace_and_temp_directories_are_writable_and_privileges_cannot_grow() {
    let dir = TestDir::new("sandbox-allowed");
    let commands = [
        "mkdir -p a/b && echo ok > a/b/c.txt && mv a/b/c.txt d.txt && cat d.txt".to_string(),
        "f=$(mktemp) && echo t > $f && cat $f && rm $f".to_string(),
        "echo x > /dev/null && head -c 3 /dev/zero | wc -c".to_string(),
        "grep NoNewPrivs /proc/self/status".to_string(),
        "sh -c 'grep NoNewPrivs /proc/self/status'".to_string(),
    ];
    let out = bash(&dir, &commands, &[]);
    let results = results(&out);
    assert!(results.iter().all(|(code, _)| *code == Some(0)), "{results:#?}");
    assert!(results[0].1.contains("ok"));
    assert!(results[1].1.contains("stdout:\nt\n"));
    // A setuid program cannot raise what a command may do: no new privileges, for its
    // children too.
    assert!(results[3].1.contains("NoNewPrivs:\t1") && results[4].1.contains("NoNewPrivs:\t1"));
    assert_eq!(crate::util::read(&dir.path("work/d.txt")), "ok\n");
}

#[test]
fn read_only_refuses_the_workspace_too_and_extra_directories_are_writable() {
    let dir = TestDir::new("sandbox-read-only");
    // A workspace outside the temp directories, which stay writable.
    let workspace = Outside::new();
    let extra = Outside::new();
    let commands = [
        "echo x > here.txt".to_string(),
        format!("echo y > {}", extra.path("extra.txt")),
        "echo t > /tmp/zero-sandbox-read-only-$$ && rm /tmp/zero-sandbox-read-only-$$".to_string(),
    ];
    let root = extra.root.display().to_string();
    let work = workspace.root.display().to_string();
    let args = ["-C", &work, "--sandbox", "read-only", "--sandbox-writable", &root];
    let out = bash(&dir, &commands, &args);
    let results = results(&out);
    assert_eq!(results[0].0, Some(2), "{results:#?}");
    assert!(results[0].1.ends_with("[sandbox: writes are refused (--sandbox read-only)]"));
    assert!(!workspace.root.join("here.txt").exists());
    assert_eq!((results[1].0, results[2].0), (Some(0), Some(0)), "{results:#?}");
    assert_eq!(crate::util::read(&extra.root.join("extra.txt")), "y\n");
    let start = &out.stream()[0];
    assert_eq!(start["sandbox"]["mode"], "read-only");
    assert!(start["sandbox"]["enforcement"].as_str().unwrap().starts_with("landlock-v"));
}

#[test]
fn the_network_switch_refuses_tcp_and_udp_to_a_loopback_listener() {
    let dir = TestDir::new("sandbox-network");
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let (tcp_port, udp_port) = (tcp.local_addr().unwrap().port(), udp.local_addr().unwrap().port());
    let connect = |proto: &str, port: u16| {
        format!("perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(PeerAddr => \"127.0.0.1:{port}\", Proto => \"{proto}\") or die \"no socket: $!\\n\"; print $s \"hi\\n\"; print \"sent\\n\"'")
    };
    let commands = [connect("tcp", tcp_port), connect("udp", udp_port)];
    let off = bash(&dir, &commands, &["--sandbox-network", "off"]);
    let refused = results(&off);
    for (code, output) in &refused {
        assert_ne!(*code, Some(0));
        assert!(output.contains("no socket: Permission denied"), "{output}");
    }
    assert_eq!(off.stream()[0]["sandbox"]["network"], "off");
    // On (the default), both reach the listeners.
    let on = bash(&dir, &commands, &[]);
    let reached = results(&on);
    assert!(reached.iter().all(|(code, o)| *code == Some(0) && o.contains("sent")), "{reached:#?}");
    let mut buf = [0u8; 16];
    let (n, _) = udp.recv_from(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"hi\n");
    drop(tcp);
}

#[test]
fn a_kernel_without_landlock_or_seccomp_is_said_and_can_be_refused() {
    let dir = TestDir::new("sandbox-unavailable");
    let outside = Outside::new();
    let commands = [format!("echo x > {}", outside.path("new.txt"))];
    let out = bash_zero(&dir, &commands, &["--sandbox-network", "off"])
        .env("ZERO_DEBUG_SANDBOX", "none")
        .run();
    out.assert_code(0);
    let events = out.stream();
    assert_eq!(
        events[0]["sandbox"],
        json!({"mode": "workspace-write", "network": "off", "enforcement": "none"})
    );
    let warning = events.iter().find(|e| e["code"] == "sandbox_unavailable").expect("a warning");
    assert_eq!(
        warning["message"],
        "The bash sandbox is not fully enforced: writes are not confined (--sandbox workspace-write): this kernel has no Landlock; network sockets are not refused (--sandbox-network off): this kernel has no seccomp filters."
    );
    // Unconfined, as the warning said.
    assert_eq!(crate::util::read(&outside.root.join("new.txt")), "x\n");
    // --sandbox-required refuses to run so, before any model call.
    let script = dir.script(&json!({"turns": [{"error": "never called"}]})).display().to_string();
    let refused = dir
        .zero()
        .env("ZERO_DEBUG_SANDBOX", "no-landlock")
        .args(&["exec", "-o", "stream-json", "--sandbox-required", "--script", &script, "go"])
        .run();
    refused.assert_code(2);
    assert_eq!(
        refused.events()[0]["message"],
        "The bash sandbox is not fully enforced: writes are not confined (--sandbox workspace-write): this kernel has no Landlock (--sandbox-required)."
    );
    // An old ABI without the truncate right is named.
    let partial = dir
        .zero()
        .env("ZERO_DEBUG_SANDBOX", "abi-2")
        .args(&["exec", "--list-tools", "-o", "json"])
        .run();
    assert_eq!(
        partial.warnings(),
        ["The bash sandbox is not fully enforced: truncating a file outside the writable directories is not refused (Landlock ABI 2 has no truncate right)."]
    );
}

#[test]
fn schema_1_and_sandbox_off_are_as_before() {
    let dir = TestDir::new("sandbox-off");
    let outside = Outside::new();
    let commands = [format!("echo x > {}", outside.path("new.txt"))];
    let out = bash(&dir, &commands, &["--sandbox", "off"]);
    assert_eq!(results(&out)[0].0, Some(0));
    assert_eq!(out.stream()[0]["sandbox"]["enforcement"], "none");
    // Schema 1 says nothing of the sandbox.
    let script = dir.script(&json!({"turns": [{"text": "hi"}]})).display().to_string();
    let one = dir.zero().args(&["exec", "-o", "stream-json", "--script", &script, "go"]).run();
    assert!(one.events()[0].get("sandbox").is_none(), "{one:?}");
}

#[test]
fn device_nodes_inherited_descriptors_and_signals_do_not_lead_out() {
    let dir = TestDir::new("sandbox-more");
    let outside = Outside::new();
    let before = outside.snapshot();
    let commands = [
        "mknod node c 1 3 && echo made".to_string(),
        "echo x >&9".to_string(),
        "kill -0 $PPID && echo reached".to_string(),
    ];
    // zero itself holds descriptor 9, open for appending to a file outside.
    let zero = bash_zero(&dir, &commands, &[]);
    let held = outside.path("kept.txt");
    let mut wrapped = std::process::Command::new("/bin/sh");
    wrapped
        .arg("-c")
        .arg("exec 9>>\"$0\"; exec \"$@\"")
        .arg(&held)
        .arg(crate::util::ZERO)
        .args(&zero.args)
        .env_clear()
        .envs(&zero.env)
        .current_dir(&zero.cwd);
    let out = wrapped.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let results = results_in(&stdout);
    assert_eq!(results.len(), 3, "{stdout}");
    for (i, (code, output)) in results.iter().enumerate() {
        assert_ne!(*code, Some(0), "{} ran: {output}", commands[i]);
    }
    assert!(!dir.path("work/node").exists());
    assert_eq!(outside.snapshot(), before, "something outside changed");
}

#[test]
fn git_works_in_a_workspace_below_the_repository_root() {
    let dir = TestDir::new("sandbox-git");
    // The repository outside the temp directories, the workspace one level down.
    let repo = Outside::new();
    let git = |args: &[&str]| {
        let done =
            std::process::Command::new("git").args(args).current_dir(&repo.root).output().unwrap();
        assert!(done.status.success(), "{done:?}");
    };
    git(&["init", "-q"]);
    std::fs::create_dir_all(repo.root.join("sub")).unwrap();
    std::fs::write(repo.root.join("sub/f.txt"), "f\n").unwrap();
    let work = repo.root.join("sub").display().to_string();
    let commands = ["git add f.txt && git -c user.email=z@example.com -c user.name=z commit -qm first && echo committed".to_string()];
    let out = bash(&dir, &commands, &["-C", &work]);
    let results = results(&out);
    assert_eq!(results[0].0, Some(0), "{results:#?}");
    assert!(results[0].1.contains("committed"));
}
