//! Which files the search tools see: git's ignore rules (`.gitignore` at every level,
//! `.git/info/exclude`), `.ignore` files, hidden entries, and the same file set from
//! list_directory, glob and grep. Ground truth is `git ls-files --cached --others
//! --exclude-standard` (and `rg --files` where ripgrep is installed); tests that need git say
//! so and pass when it is absent.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::util::TestDir;

/// git with no user or system configuration, so only the tree's own files count.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join(".no-config"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The files git would show for `dir`, relative to it.
fn git_files(dir: &Path) -> BTreeSet<String> {
    git(dir, &["ls-files", "--cached", "--others", "--exclude-standard"])
        .expect("git ls-files")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The files `rg --files -j1` lists in `dir`, or `None` (with a note) when rg is absent.
fn rg_files(dir: &Path) -> Option<BTreeSet<String>> {
    if !have("rg") {
        crate::util::skip("walks against rg", crate::util::Skip::Missing, "rg is not installed");
        return None;
    }
    let out = Command::new("rg").args(["--files", "-j1"]).current_dir(dir).output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect())
}

fn visible(files: &BTreeSet<String>) -> BTreeSet<String> {
    files.iter().filter(|f| !f.split('/').any(|part| part.starts_with('.'))).cloned().collect()
}

/// Runs the three tools through the scripted provider in `sub` (of work/) and returns the
/// files each reports: list_directory (recursive), glob `**/*`, grep files_with_matches.
fn tool_files(dir: &TestDir, sub: &str, extra: Value) -> [BTreeSet<String>; 3] {
    let with = |mut args: Value| {
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    let script = dir.write("tools-script.json", &json!({"turns": [
        {"toolCalls": [
            {"name": "list_directory", "arguments": with(json!({"recursive": true, "max_depth": 5}))},
            {"name": "glob", "arguments": with(json!({"pattern": "**/*", "limit": 1000}))},
            {"name": "grep", "arguments": with(json!({"pattern": "x", "output_mode": "files_with_matches", "head_limit": 1000}))},
        ]},
        {"text": "done"}
    ]}).to_string());
    let out = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "-C", sub, "--script", script.to_str().unwrap(), "ls"])
        .run();
    out.assert_code(0);
    let results: Vec<String> = out
        .stream()
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["output"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 3, "{out:?}");
    // list_directory: indented rows; files are 📄, directories 📁 with a trailing slash.
    let mut listed = BTreeSet::new();
    let mut stack: Vec<String> = Vec::new();
    for row in results[0].lines().skip(2) {
        let depth = (row.len() - row.trim_start_matches(' ').len()) / 2;
        let row = row.trim_start();
        stack.truncate(depth);
        if let Some(name) = row.strip_prefix("📁 ") {
            stack.push(name.trim_end_matches('/').to_string());
        } else if let Some(name) = row.strip_prefix("📄 ") {
            let mut path = stack.clone();
            path.push(name.to_string());
            listed.insert(path.join("/"));
        }
    }
    let globbed: BTreeSet<String> = results[1].lines().map(str::to_string).collect();
    let grepped: BTreeSet<String> = results[2].lines().map(str::to_string).collect();
    [listed, globbed, grepped]
}

/// A tree that exercises each rule; every file holds an `x`.
fn rule_tree(dir: &TestDir) {
    let files = [
        "src/main.rs",
        "src/gen/out.rs",
        "src/keep.log",
        "debug.log",
        "notes/a.log",
        "target/debug/app",
        "crates/x/target/t.o",
        "build/b.txt",
        "build.txt",
        "docs/out/index.html",
        "x/docs/out/page.html",
        "deep/a/b/c/gen.tmp",
        "deep/a/b/keep.tmp",
        "file1.txt",
        "fileA.txt",
        "#hash",
        "space ",
        "a*b",
        "vendor/lib/v.rs",
        "vendor/lib/keep.rs",
        "local/secret.txt",
        "local/public.txt",
        "sub/.gitignore",
        "sub/ignored-here.txt",
        "sub/kept.txt",
        "sub/nested/ignored-here.txt",
        ".hidden/h.txt",
        ".env",
        "node_modules/pkg/index.js",
        "excluded.bin",
        "re/inc/x.txt",
    ];
    for f in files {
        dir.write(&format!("work/{f}"), "x\n");
    }
    dir.write(
        "work/.gitignore",
        "# build output\n*.log\n!src/keep.log\n/target\ntarget/\nbuild/\ndocs/out\n**/gen\ndeep/**/*.tmp\n!deep/a/b/keep.tmp\nfile[0-9].txt\n\\#hash\nspace\\ \na\\*b\nvendor/\n!vendor/lib/keep.rs\nlocal/*\n!local/public.txt\ntrailing-spaces   \nre/\n!re/inc/x.txt\n",
    );
    dir.write("work/sub/.gitignore", "ignored-here.txt\n!nested/ignored-here.txt\n");
    dir.write("work/x.txt", "x\n");
    dir.write("work/trailing-spaces", "x\n");
}

#[test]
fn ignore_rules_match_git_and_the_three_tools_agree() {
    if !have("git") {
        crate::util::skip("ignore rules", crate::util::Skip::Missing, "git is not installed");
        return;
    }
    let dir = TestDir::new("walk-rules");
    rule_tree(&dir);
    let work = dir.work();
    git(&work, &["init", "-q"]).expect("git init");
    dir.write("work/.git/info/exclude", "excluded.bin\n");
    let truth = git_files(&work);
    // The rules did something: these are left out, these kept.
    for gone in [
        "debug.log",
        "target/debug/app",
        "src/gen/out.rs",
        "docs/out/index.html",
        "vendor/lib/keep.rs",
        "excluded.bin",
        "re/inc/x.txt",
    ] {
        assert!(!truth.contains(gone), "git keeps {gone}");
    }
    for kept in [
        "src/keep.log",
        "deep/a/b/keep.tmp",
        "fileA.txt",
        "x/docs/out/page.html",
        "local/public.txt",
        "sub/nested/ignored-here.txt",
        ".env",
    ] {
        assert!(truth.contains(kept), "git drops {kept}");
    }
    let [listed, globbed, grepped] = tool_files(&dir, ".", json!({}));
    // node_modules is left out by zero besides git's rules.
    let expected: BTreeSet<String> =
        truth.iter().filter(|f| !f.starts_with("node_modules/")).cloned().collect();
    assert_eq!(listed, expected, "list_directory shows hidden files, as git does");
    assert_eq!(globbed, visible(&expected), "glob skips hidden entries");
    assert_eq!(grepped, visible(&expected), "grep skips hidden entries");
    if let Some(rg) = rg_files(&work) {
        assert_eq!(
            globbed,
            rg.into_iter().filter(|f| !f.starts_with("node_modules/")).collect::<BTreeSet<_>>(),
            "as rg --files"
        );
    }
    // include_ignored: everything but .git.
    let [_, all, _] = tool_files(&dir, ".", json!({"include_ignored": true}));
    assert!(
        all.contains("target/debug/app") && all.contains("node_modules/pkg/index.js"),
        "{all:?}"
    );
    assert!(!all.iter().any(|f| f.starts_with(".git/")));
}

#[test]
fn rules_above_the_workspace_apply_and_ignore_files_work_outside_git() {
    if !have("git") {
        crate::util::skip("ignore rules", crate::util::Skip::Missing, "git is not installed");
        return;
    }
    // The workspace is a subdirectory of the repository: the root's .gitignore applies.
    let dir = TestDir::new("walk-above");
    for f in ["app/src/a.rs", "app/out/b.rs", "app/c.tmp", "app/d.txt"] {
        dir.write(&format!("work/{f}"), "x\n");
    }
    dir.write("work/.gitignore", "app/out/\n*.tmp\n");
    git(&dir.work(), &["init", "-q"]).expect("git init");
    let truth = git_files(&dir.work().join("app"));
    assert_eq!(truth, ["d.txt", "src/a.rs"].iter().map(|s| s.to_string()).collect());
    let [listed, globbed, grepped] = tool_files(&dir, "app", json!({}));
    assert_eq!((&listed, &globbed, &grepped), (&truth, &truth, &truth));
    // Outside a repository: .gitignore means nothing, .ignore still counts (as for rg).
    let dir = TestDir::new("walk-no-git");
    for f in ["a.txt", "b.log", "c.tmp", "keep/k.txt"] {
        dir.write(&format!("work/{f}"), "x\n");
    }
    dir.write("work/.gitignore", "*.log\n");
    dir.write("work/.ignore", "*.tmp\n");
    let [listed, globbed, grepped] = tool_files(&dir, ".", json!({}));
    let expected: BTreeSet<String> =
        ["a.txt", "b.log", "keep/k.txt"].iter().map(|s| s.to_string()).collect();
    assert_eq!((&globbed, &grepped), (&expected, &expected));
    assert_eq!(
        listed,
        expected.iter().cloned().chain([".gitignore".to_string(), ".ignore".to_string()]).collect()
    );
    if let Some(rg) = rg_files(&dir.work()) {
        assert_eq!(globbed, rg);
    }
}

#[test]
fn checkouts_inside_a_plain_workspace_each_get_their_own_rules() {
    if !have("git") {
        crate::util::skip("ignore rules", crate::util::Skip::Missing, "git is not installed");
        return;
    }
    // A workspace that is not a repository, holding two checkouts and a plain folder: each
    // checkout's .gitignore and exclude file apply inside it (as git ls-files in it says),
    // the workspace's own .gitignore applies nowhere, and one checkout's rules stop at its
    // nested checkout.
    let dir = TestDir::new("walk-checkouts");
    for f in [
        "one/src/a.rs",
        "one/target/debug/app",
        "one/notes.tmp",
        "one/inner/keep.tmp",
        "one/inner/x.log",
        "one/inner/out/o.txt",
        "two/b.go",
        "two/vendor/v.go",
        "two/local.bin",
        "two/.github/ci.yml",
        "two/.hidden/h.txt",
        "plain/target/t.o",
        "plain/c.log",
        "top.log",
    ] {
        dir.write(&format!("work/{f}"), "x\n");
    }
    dir.write("work/.gitignore", "*.log\n");
    dir.write("work/one/.gitignore", "target/\n*.tmp\nout/\n");
    dir.write("work/one/inner/.gitignore", "*.log\n");
    dir.write("work/two/.gitignore", "vendor/\n");
    // Re-included by name: shown although hidden, as rg and fd show it.
    dir.write("work/two/.ignore", "!/.github/\n");
    dir.write("work/plain/.gitignore", "target/\n");
    for repo in ["one", "one/inner", "two"] {
        git(&dir.work().join(repo), &["init", "-q"]).expect("git init");
    }
    dir.write("work/two/.git/info/exclude", "*.bin\n");
    let mut expected = BTreeSet::new();
    for repo in ["one", "one/inner", "two"] {
        for f in git_files(&dir.work().join(repo)) {
            // A nested repository shows up in its parent's listing as a directory entry.
            if !f.ends_with('/') {
                expected.insert(format!("{repo}/{f}"));
            }
        }
    }
    expected.extend(["plain/target/t.o", "plain/c.log", "top.log"].map(String::from));
    let mut expected = visible(&expected);
    expected.insert("two/.github/ci.yml".to_string());
    assert!(expected.contains("one/inner/keep.tmp") && !expected.contains("one/inner/x.log"));
    assert!(!expected.contains("one/target/debug/app") && !expected.contains("two/local.bin"));
    let [_, globbed, grepped] = tool_files(&dir, ".", json!({}));
    assert_eq!(globbed, expected);
    assert_eq!(grepped, expected);
    if let Some(rg) = rg_files(&dir.work()) {
        assert_eq!(globbed, rg, "as rg --files");
    }
}

#[test]
fn grep_holds_one_file_open_at_a_time() {
    // 1,500 files under a limit of 64 open descriptors: each is searched as the walk meets it.
    let dir = TestDir::new("walk-fds");
    for i in 0..1500 {
        dir.write(&format!("work/d{}/f{i}.txt", i % 10), "needle\n");
    }
    let script = dir.write("fd-script.json", &json!({"turns": [
        {"toolCalls": [{"name": "grep", "arguments": {"pattern": "needle", "output_mode": "count", "head_limit": 1}}]},
        {"text": "done"}
    ]}).to_string());
    let zero = dir.zero().args(&[
        "exec",
        "-o",
        "stream-json",
        "--script",
        script.to_str().unwrap(),
        "count",
    ]);
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg("ulimit -n 64 && exec \"$0\" \"$@\"").arg(crate::util::ZERO).args(&zero.args);
    cmd.env_clear().envs(&zero.env).current_dir(&zero.cwd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "tool_result")
        .unwrap();
    assert!(
        result["output"].as_str().unwrap().contains("\n1500 matches in 1500 files"),
        "{result}"
    );
}

/// The three tools' outputs (list_directory, glob, grep) for a run in `sub` of work/.
fn tool_outputs(dir: &TestDir, sub: &str) -> Vec<String> {
    let script = dir.write("tools-script.json", &json!({"turns": [
        {"toolCalls": [
            {"name": "list_directory", "arguments": {"recursive": true, "max_depth": 5}},
            {"name": "glob", "arguments": {"pattern": "**/*", "limit": 1000}},
            {"name": "grep", "arguments": {"pattern": "x", "output_mode": "files_with_matches"}},
        ]},
        {"text": "done"}
    ]}).to_string());
    let out = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "-C", sub, "--script", script.to_str().unwrap(), "ls"])
        .run();
    out.assert_code(0);
    out.stream()
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["output"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_large_ignore_file_applies_and_one_too_large_fails_closed() {
    let dir = TestDir::new("big-ignore");
    // 2 MiB of rules (over the old 1 MiB cap) that end by excluding the secrets.
    let filler: String = (0..110_000).map(|i| format!("generated-{i:06}.tmp\n")).collect();
    let rules = format!("{filler}.env*\nsecrets/\n");
    assert!(rules.len() > 2 << 20);
    for repo in ["work/ok", "work/big"] {
        dir.write(&format!("{repo}/.git/HEAD"), "ref: refs/heads/main\n");
        dir.write(&format!("{repo}/src/main.rs"), "x\n");
        dir.write(&format!("{repo}/.env.local"), "x API_TOKEN=hunter2\n");
        dir.write(&format!("{repo}/secrets/prod.key"), "x\n");
    }
    dir.write("work/ok/.gitignore", &rules);
    for out in tool_outputs(&dir, "ok") {
        assert!(out.contains("main.rs"), "{out}");
        assert!(
            !out.contains(".env") && !out.contains("secrets") && !out.contains("left out"),
            "{out}"
        );
    }
    // Past 16 MiB the file is not read, and nothing it might exclude is shown: the
    // directory is left out, with a note naming the file.
    let huge = format!("{}{rules}", "# padding\n".repeat(1_600_000));
    assert!(huge.len() > 16 << 20);
    dir.write("work/big/sub/.gitignore", &huge);
    dir.write("work/big/sub/.env", "x\n");
    dir.write("work/big/sub/kept.rs", "x\n");
    for out in tool_outputs(&dir, "big") {
        assert!(out.contains("main.rs") && !out.contains("kept.rs"), "{out}");
        assert!(!out.contains("sub/.env\n") && !out.contains("📄 .env\n"), "{out}");
        assert!(
            out.contains("(sub/ was left out: sub/.gitignore is 18 MiB, over the 16 MiB zero reads of an ignore file, so what it excludes cannot be told apart)"),
            "{out}"
        );
    }
    // The same file at the root of the walk: nothing is shown at all.
    std::fs::rename(dir.path("work/big/sub/.gitignore"), dir.path("work/big/.gitignore")).unwrap();
    for out in tool_outputs(&dir, "big") {
        assert!(
            !out.contains("main.rs") && !out.contains(".env") && !out.contains("secrets"),
            "{out}"
        );
        assert!(out.contains("(. was left out: "), "{out}");
    }
    // A FIFO where an ignore file belongs may say anything: its directory is left out too.
    dir.write("work/fifo/.git/HEAD", "ref: refs/heads/main\n");
    dir.write("work/fifo/main.rs", "x\n");
    dir.write("work/fifo/sub/.env", "x\n");
    crate::util::mkfifo(&dir.path("work/fifo/sub/.gitignore"));
    for out in tool_outputs(&dir, "fifo") {
        assert!(out.contains("main.rs") && !out.contains(".env"), "{out}");
        assert!(
            out.contains("(sub/ was left out: sub/.gitignore is not a regular file, so what it excludes cannot be told apart)"),
            "{out}"
        );
    }
}

#[test]
fn names_with_control_characters_are_shown_escaped() {
    let dir = TestDir::new("control-names");
    dir.write("work/a\nb.txt", "x\n");
    dir.write("work/c\u{1b}[31m.txt", "x\n");
    dir.write("work/d\rfake.txt", "x\n");
    // A backslash is doubled, so `a\nb.txt` spelled with one cannot pass for the first name;
    // a right-to-left override cannot make a name ending `.exe` look as if it ended `.txt`.
    dir.write("work/e\\nf.txt", "x\n");
    dir.write("work/g\u{202e}txt.exe", "x\n");
    let outputs = tool_outputs(&dir, ".");
    for (out, rows) in outputs.iter().zip([
        [
            "📄 a\\nb.txt",
            "📄 c\\x1b[31m.txt",
            "📄 d\\rfake.txt",
            "📄 e\\\\nf.txt",
            "📄 g\\u{202e}txt.exe",
        ],
        ["a\\nb.txt", "c\\x1b[31m.txt", "d\\rfake.txt", "e\\\\nf.txt", "g\\u{202e}txt.exe"],
        ["a\\nb.txt", "c\\x1b[31m.txt", "d\\rfake.txt", "e\\\\nf.txt", "g\\u{202e}txt.exe"],
    ]) {
        let lines: Vec<&str> = out.lines().map(str::trim).collect();
        for row in rows {
            assert!(lines.contains(&row), "{row:?} in {out:?}");
        }
        assert!(
            !out.contains('\u{1b}') && !out.contains('\r') && !lines.contains(&"b.txt"),
            "{out:?}"
        );
    }
}

#[test]
fn patterns_nested_too_deeply_or_too_large_are_tool_errors_not_a_crash() {
    // At the default --auto low, the model reaches the regex engine and the glob matcher.
    let dir = TestDir::new("walk-patterns");
    dir.write("work/a.txt", "aaa\n");
    let stars = format!("a{}", "*".repeat(50_000));
    let groups = format!("{}a{}", "(".repeat(5_000), ")".repeat(5_000));
    let braces = format!("{}a{}", "{".repeat(5_000), "}".repeat(5_000));
    let script = dir.write("patterns.json", &json!({"turns": [
        {"toolCalls": [
            {"name": "grep", "arguments": {"pattern": stars}},
            {"name": "grep", "arguments": {"pattern": groups}},
            {"name": "grep", "arguments": {"pattern": "(?:){1000}{1000}{1000}{1000}"}},
            {"name": "glob", "arguments": {"pattern": braces}},
            {"name": "grep", "arguments": {"pattern": "a", "glob": "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"}},
        ]},
        {"text": "done"}
    ]}).to_string());
    let out = dir
        .zero()
        .args(&["exec", "-o", "stream-json", "--script", script.to_str().unwrap(), "search"])
        .run();
    out.assert_code(0);
    let results: Vec<(String, String)> = out
        .stream()
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["status"].as_str().unwrap().into(), e["output"].as_str().unwrap().into()))
        .collect();
    let errors: Vec<&str> = results.iter().map(|(_, o)| o.as_str()).collect();
    assert!(results.iter().all(|(status, _)| status == "error"), "{results:#?}");
    assert!(
        errors[0]
            .contains("pattern nested too deeply (more than 128 levels of groups and repetitions)"),
        "{}",
        errors[0]
    );
    assert!(errors[1].contains("pattern nested too deeply"), "{}", errors[1]);
    assert!(
        errors[2].contains("pattern too large: it would compile to more than 100000 instructions"),
        "{}",
        errors[2]
    );
    assert!(errors[3].contains("glob pattern longer than 4096 characters"), "{}", errors[3]);
    assert!(errors[4].contains("too many {...} alternatives (more than 1024)"), "{}", errors[4]);
}

#[test]
fn grep_says_which_files_it_skipped_for_their_size() {
    let dir = TestDir::new("walk-too-large");
    dir.write("work/small.txt", "nothing here\n");
    // Sparse files past the 50 MiB grep searches: skipped by their size, never read.
    for name in ["big.log", "huge.log"] {
        let file = std::fs::File::create(dir.path(&format!("work/{name}"))).unwrap();
        file.set_len(51 * 1024 * 1024).unwrap();
    }
    let grep = |pattern: &str| {
        let script = dir.write(
            "grep.json",
            &json!({"turns": [
                {"toolCalls": [{"name": "grep", "arguments": {"pattern": pattern}}]},
                {"text": "done"}
            ]})
            .to_string(),
        );
        let out = dir
            .zero()
            .args(&["exec", "-o", "stream-json", "--script", script.to_str().unwrap(), "go"])
            .run();
        out.stream().into_iter().find(|e| e["type"] == "tool_result").unwrap()["output"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        grep("needle"),
        "No matches found.\n... (2 files over the 50 MiB grep searches were not searched: big.log, huge.log)"
    );
    std::fs::remove_file(dir.path("work/huge.log")).unwrap();
    assert_eq!(
        grep("nothing"),
        "small.txt:1: nothing here\n... (big.log was not searched: it is over the 50 MiB grep searches)"
    );
}
