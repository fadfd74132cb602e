/**
 * Sandboxed services end to end on this host's kernel: machine config →
 * ServiceSpec → the supervisor → native-ops' spawner, which installs the
 * seccomp filter and drops capabilities between fork and exec. Needs root:
 * mount(2) must be refused by the filter and not by a missing capability,
 * and only root can keep or drop capabilities.
 */
import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import {
  type ResourceSpecs,
  SERVICE_SPEC,
  SERVICE_STATUS,
  type ServiceStatusSpec,
} from "../../resources/mod.ts";
import { Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { createSupervisor, type Supervisor } from "../../supervisor/mod.ts";
import { serviceSpecsFromConfig } from "./service_spec_controller.ts";

const isRoot = Deno.uid() === 0;
const PYTHON = "/usr/bin/python3";
const hasPython = await Deno.stat(PYTHON).then(() => true, () => false);

/** mount(2) of a tmpfs on argv[1] through libc; prints `mount ok` or the errno's text. */
const MOUNT_PY = [
  "import ctypes, os, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "t = sys.argv[1].encode()",
  'r = libc.mount(b"none", t, b"tmpfs", 0, None)',
  'print("mount", "ok" if r == 0 else os.strerror(ctypes.get_errno()), flush=True)',
  "r == 0 and libc.umount2(t, 0)",
].join("\n");

/** bind(2) to a free port below 1024 on loopback; prints `bind ok` or the errno's text. */
const BIND_PY = [
  "import errno, socket",
  "for port in range(900, 1000):",
  "    s = socket.socket()",
  "    try:",
  '        s.bind(("127.0.0.1", port)); print("bind ok", flush=True); break',
  "    except OSError as e:",
  "        if e.errno != errno.EADDRINUSE:",
  '            print("bind", e.strerror, flush=True); break',
  "    finally:",
  "        s.close()",
].join("\n");

/** mkdir(2) of argv[1]; prints `mkdir ok` or the errno's text. */
const MKDIR_PY = [
  "import os, sys",
  "try:",
  '    os.mkdir(sys.argv[1]); print("mkdir ok", flush=True)',
  "except OSError as e:",
  '    print("mkdir", e.strerror, flush=True)',
].join("\n");

const CAPS_SH = "grep -E '^(CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status";

/** One YAML service entry. */
function service(id: string, command: string[], extra: string[] = []): string[] {
  return [
    `    - id: ${id}`,
    `      command: ${JSON.stringify(command)}`,
    "      restart: never",
    ...extra,
  ];
}

/** Parses `services` as a machine config and runs its specs under a native supervisor. */
async function runServices(
  services: string[],
  fn: (t: {
    supervisor: Supervisor;
    finished: (id: string) => Promise<ServiceStatusSpec>;
    /** The status once the service runs and its sandbox was read back from the kernel. */
    sandboxed: (id: string) => Promise<ServiceStatusSpec>;
    /** The first `n` lines the service logs (waits for them). */
    lines: (id: string, n?: number) => Promise<string[]>;
  }) => Promise<void>,
  machine: string[] = [],
): Promise<void> {
  const yaml = [
    "version: v1alpha1",
    "machine:",
    "  hostname: n",
    ...machine,
    "  services:",
    ...services,
  ].join("\n");
  const r = parseMachineConfig(yaml, "sandbox.yaml");
  assert.ok(r.ok, r.ok ? "" : r.errors.map((e) => e.format()).join("\n"));
  const store = new Store<ResourceSpecs>();
  const supervisor = createSupervisor({ store, process: nativeProcessBackend() });
  try {
    for (const [id, spec] of serviceSpecsFromConfig(r.config)) {
      store.create({ type: SERVICE_SPEC, namespace: "runtime", id, owner: "test", spec });
    }
    const finished = async (id: string) =>
      (await waitForResource(
        store,
        SERVICE_STATUS,
        (x) => x.metadata.id === id && (x.spec.state === "finished" || x.spec.state === "failed"),
        15_000,
      )).spec;
    const lines = async (id: string, n = 1) => {
      await waitForResource(store, SERVICE_STATUS, (x) => x.metadata.id === id, 15_000);
      const out: string[] = [];
      const signal = AbortSignal.timeout(15_000);
      for await (const l of supervisor.logs(id, { follow: true, signal })) {
        out.push(l.text);
        if (out.length >= n) break;
      }
      return out;
    };
    const sandboxed = async (id: string) =>
      (await waitForResource(
        store,
        SERVICE_STATUS,
        (x) => x.metadata.id === id && x.spec.state === "running" && x.spec.sandbox != null,
        15_000,
      )).spec;
    await fn({ supervisor, finished, lines, sandboxed });
  } finally {
    await supervisor.close();
    await nativeProcessBackend().close();
  }
}

function rootTest(name: string, fn: () => Promise<void>, needs = "") {
  Deno.test({
    name: `sandbox (native): ${name} (needs root${needs ? `, ${needs}` : ""})`,
    ignore: !isRoot || (needs.includes("python3") && !hasPython),
    fn,
  });
}

rootTest(
  "an OCI profile denying mkdir/mkdirat with EPERM: mkdir fails; unconfined it succeeds",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "sandbox-mkdir-" });
    try {
      await runServices(
        [
          ...service("confined", [PYTHON, "-c", MKDIR_PY, `${dir}/a`], [
            "      sandbox: { seccomp: no-mkdir }",
          ]),
          ...service("free", [PYTHON, "-c", MKDIR_PY, `${dir}/b`], [
            "      sandbox: { seccomp: unconfined }",
          ]),
        ],
        async ({ lines, finished }) => {
          assert.deepEqual(await lines("confined"), ["mkdir Operation not permitted"]);
          assert.deepEqual(await lines("free"), ["mkdir ok"]);
          // The sandbox read back from /proc is null when the process exited before the read.
          const confined = (await finished("confined")).sandbox;
          if (confined) {
            assert.deepEqual([confined.profile, confined.seccomp], ["no-mkdir", "filter"]);
          }
          const free = (await finished("free")).sandbox;
          if (free) assert.equal(free.seccomp, "disabled");
        },
        [
          "  seccomp_profiles:",
          "    no-mkdir:",
          "      defaultAction: SCMP_ACT_ALLOW",
          "      architectures: [SCMP_ARCH_X86_64, SCMP_ARCH_AARCH64]",
          "      syscalls:",
          "        - names: [mkdir, mkdirat]",
          "          action: SCMP_ACT_ERRNO",
          "          errnoRet: 1",
        ],
      );
      assert.ok(await Deno.stat(`${dir}/b`).then((s) => s.isDirectory));
      await assert.rejects(() => Deno.stat(`${dir}/a`), Deno.errors.NotFound);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
  "python3",
);

/** mkdir(2) of argv[1] with mode 0o755, then argv[2] with 0o555; one line each. */
const MKDIR_MODES_PY = [
  "import os, sys",
  "for path, mode in ((sys.argv[1], 0o755), (sys.argv[2], 0o555)):",
  "    try:",
  '        os.mkdir(path, mode); print("mkdir", oct(mode), "ok", flush=True)',
  "    except OSError as e:",
  '        print("mkdir", oct(mode), e.strerror, flush=True)',
].join("\n");

rootTest(
  "an OCI profile with an ordered comparison (mode >= 0o700) denies one mkdir and allows the other",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "sandbox-mkdir-ge-" });
    try {
      await runServices(
        service("ranged", [PYTHON, "-c", MKDIR_MODES_PY, `${dir}/wide`, `${dir}/narrow`], [
          "      sandbox: { seccomp: no-wide-mkdir }",
        ]),
        async ({ lines }) => {
          assert.deepEqual(await lines("ranged", 2), [
            "mkdir 0o755 Operation not permitted",
            "mkdir 0o555 ok",
          ]);
        },
        [
          "  seccomp_profiles:",
          "    no-wide-mkdir:",
          "      defaultAction: SCMP_ACT_ALLOW",
          "      architectures: [SCMP_ARCH_X86_64, SCMP_ARCH_AARCH64]",
          "      syscalls:",
          // glibc calls mkdir(2) on x86_64 (mode is argument 1) and mkdirat(2) on aarch64 (2).
          "        - names: [mkdir]",
          "          action: SCMP_ACT_ERRNO",
          "          errnoRet: 1",
          "          args: [{ index: 1, value: 448, op: SCMP_CMP_GE }]",
          "        - names: [mkdirat]",
          "          action: SCMP_ACT_ERRNO",
          "          errnoRet: 1",
          "          args: [{ index: 2, value: 448, op: SCMP_CMP_GE }]",
        ],
      );
      await assert.rejects(() => Deno.stat(`${dir}/wide`), Deno.errors.NotFound);
      assert.ok(await Deno.stat(`${dir}/narrow`).then((s) => s.isDirectory));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
  "python3",
);

rootTest(
  "masked_paths: a directory and a file are unreadable to the service; the host still reads them",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "sandbox-masked-" });
    try {
      await Deno.mkdir(`${dir}/secrets`);
      await Deno.writeTextFile(`${dir}/secrets/key`, "hunter2\n");
      await Deno.writeTextFile(`${dir}/token`, "t0ken\n");
      const show = `ls ${dir}/secrets 2>&1 | head -1; echo "[$(cat ${dir}/token)]"`;
      await runServices(
        [
          // It stays a second, so the status read right after spawn sees its mounts.
          ...service("masked", ["/bin/sh", "-c", `${show}; sleep 1`], [
            `      sandbox: { masked_paths: [${dir}/secrets, ${dir}/token, ${dir}/missing] }`,
          ]),
          ...service("plain", ["/bin/sh", "-c", show]),
        ],
        async ({ lines, finished }) => {
          const [ls, token] = await lines("masked", 2);
          assert.match(ls, /Permission denied/);
          assert.equal(token, "[]");
          assert.deepEqual(await lines("plain", 2), ["key", "[t0ken]"]);
          // ServiceStatus names what its mountinfo shows hidden; the missing path is not.
          const sandbox = (await finished("masked")).sandbox;
          assert.deepEqual(sandbox?.masked, [`${dir}/secrets`, `${dir}/token`]);
        },
      );
      assert.equal(await Deno.readTextFile(`${dir}/secrets/key`), "hunter2\n");
      assert.equal(await Deno.readTextFile(`${dir}/token`), "t0ken\n");
      const mine = await Deno.readTextFile("/proc/self/mountinfo");
      assert.ok(!mine.includes(dir), "no mask in the host's mount namespace");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

rootTest("the default profile refuses mount(2) with EPERM; unconfined mounts", async () => {
  const target = await Deno.makeTempDir({ prefix: "sandbox-mount-" });
  try {
    await runServices(
      [
        // Both keep CAP_SYS_ADMIN: only the filter differs, so the EPERM is seccomp's.
        ...service("confined", [PYTHON, "-c", MOUNT_PY, target], [
          "      sandbox: { seccomp: default, capabilities: [CAP_SYS_ADMIN] }",
        ]),
        ...service("free", [PYTHON, "-c", MOUNT_PY, target], [
          "      sandbox: { seccomp: unconfined, capabilities: [CAP_SYS_ADMIN] }",
        ]),
      ],
      async ({ lines, finished }) => {
        assert.deepEqual(await lines("confined"), ["mount Operation not permitted"]);
        assert.deepEqual(await lines("free"), ["mount ok"]);
        // It unmounts after printing: wait for it before the directory is removed.
        assert.equal((await finished("free")).lastExit?.code, 0);
        const confined = await finished("confined");
        assert.equal(confined.lastExit?.code, 0);
        assert.equal(confined.sandbox?.profile, "default");
      },
    );
  } finally {
    await Deno.remove(target, { recursive: true });
  }
}, "python3");

rootTest(
  "capabilities are dropped as declared, kept through the ambient set for another user",
  async () => {
    await runServices(
      [
        ...service("none", ["/bin/sh", "-c", CAPS_SH]),
        ...service("bind", ["/bin/sh", "-c", CAPS_SH], [
          "      user: 65534",
          "      group: 65534",
          "      sandbox: { capabilities: [CAP_NET_BIND_SERVICE] }",
        ]),
      ],
      async ({ lines }) => {
        assert.deepEqual(await lines("none", 5), [
          "CapEff:\t0000000000000000",
          "CapBnd:\t0000000000000000",
          "CapAmb:\t0000000000000000",
          "NoNewPrivs:\t1",
          "Seccomp:\t2",
        ]);
        assert.deepEqual(await lines("bind", 5), [
          "CapEff:\t0000000000000400",
          "CapBnd:\t0000000000000400",
          "CapAmb:\t0000000000000400",
          "NoNewPrivs:\t1",
          "Seccomp:\t2",
        ]);
      },
    );
  },
);

rootTest("a kept capability works and a dropped one does not", async () => {
  await runServices(
    [
      ...service("kept", [PYTHON, "-c", BIND_PY], [
        "      user: 65534",
        "      sandbox: { capabilities: [CAP_NET_BIND_SERVICE] }",
      ]),
      ...service("dropped", [PYTHON, "-c", BIND_PY], ["      user: 65534"]),
    ],
    async ({ lines }) => {
      assert.deepEqual(await lines("kept"), ["bind ok"]);
      assert.deepEqual(await lines("dropped"), ["bind Permission denied"]);
    },
  );
}, "python3");

rootTest("a Deno payload runs under the default profile (clone3 falls back to clone)", async () => {
  const denoDir = await Deno.makeTempDir({ prefix: "sandbox-deno-" });
  try {
    await runServices(
      [...service("deno", [Deno.execPath(), "eval", "console.log('deno ok')"], [
        `      env: { NO_COLOR: '1', DENO_DIR: ${denoDir} }`,
      ])],
      async ({ lines, finished }) => {
        assert.deepEqual(await lines("deno"), ["deno ok"]);
        const s = await finished("deno");
        assert.equal(s.lastExit?.code, 0);
        assert.equal(s.sandbox?.profile, "default");
      },
    );
  } finally {
    await Deno.remove(denoDir, { recursive: true });
  }
});

rootTest("a running service's status shows the sandbox read back from the kernel", async () => {
  const store = new Store<ResourceSpecs>();
  const yaml = [
    "version: v1alpha1",
    "machine:",
    "  hostname: n",
    "  services:",
    ...service("sleeper", ["/bin/sleep", "1000"], [
      "      sandbox: { capabilities: [CAP_CHOWN, CAP_KILL] }",
    ]),
  ].join("\n");
  const r = parseMachineConfig(yaml, "sandbox.yaml");
  assert.ok(r.ok);
  const supervisor = createSupervisor({ store, process: nativeProcessBackend() });
  try {
    const spec = serviceSpecsFromConfig(r.config).get("sleeper")!;
    store.create({ type: SERVICE_SPEC, namespace: "runtime", id: "sleeper", owner: "t", spec });
    const s = await waitForResource(
      store,
      SERVICE_STATUS,
      (x) => x.metadata.id === "sleeper" && x.spec.state === "running",
      15_000,
    );
    assert.deepEqual(s.spec.sandbox, {
      profile: "default",
      seccomp: "filter",
      noNewPrivs: true,
      effective: ["CAP_CHOWN", "CAP_KILL"],
      bounding: ["CAP_CHOWN", "CAP_KILL"],
      ambient: ["CAP_CHOWN", "CAP_KILL"],
    });
  } finally {
    await supervisor.close();
    await nativeProcessBackend().close();
  }
});

rootTest(
  "read_only_paths: the service gets EROFS there under the default profile; the host still writes",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "sandbox-ro-" });
    try {
      await runServices(
        [
          // It stays running, so its sandbox can be read back from /proc (a service that exits
          // at once may be gone before that, and its status then has no sandbox).
          ...service("ro", [
            "/bin/sh",
            "-c",
            'touch "$0/service" 2>&1; echo done; exec sleep 1000',
            dir,
          ], [
            `      sandbox: { read_only_paths: [${dir}] }`,
          ]),
        ],
        async ({ lines, sandboxed }) => {
          const out = await lines("ro", 2);
          assert.match(out[0], /Read-only file system/);
          assert.equal(out[1], "done");
          const s = await sandboxed("ro");
          assert.equal(s.sandbox?.seccomp, "filter", "the filter was installed after the mounts");
          assert.deepEqual(s.sandbox?.readOnly, [dir]);
        },
      );
      await Deno.writeTextFile(`${dir}/host`, "x");
      assert.equal(await Deno.stat(`${dir}/service`).then(() => true, () => false), false);
      const mounts = await Deno.readTextFile("/proc/self/mountinfo");
      assert.ok(!mounts.includes(` ${dir} `), "the bind stayed in the service's namespace");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
