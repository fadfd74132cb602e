import assert from "node:assert/strict";
import { FakeClock } from "../../runtime/mod.ts";
import type { Datagram, DhcpSocket } from "../../platform/network/mod.ts";
import { Dhcp6Client, STATUS } from "./dhcp6_client.ts";
import { decodeDhcp6, DHCP6_OPT, DHCP6_TYPE, type Dhcp6Message, duidLl } from "./dhcp6_packet.ts";

const DUID = duidLl("52:54:00:12:34:56");
const IAID = 7;
const SIGNAL = new AbortController().signal;

/** A socket whose peer is a function from each sent message to the replies it gets. */
class ScriptedSocket implements DhcpSocket {
  sent: { m: Dhcp6Message; to: string; port: number }[] = [];
  #queue: Datagram[] = [];
  constructor(public answer: (m: Dhcp6Message) => Uint8Array[]) {}
  send(data: Uint8Array, to = "", port = 0): Promise<void> {
    const m = decodeDhcp6(data);
    this.sent.push({ m, to, port });
    for (const r of this.answer(m)) this.#queue.push({ data: r, from: "fe80::1", port: 547 });
    return Promise.resolve();
  }
  receive(): Promise<Datagram | undefined> {
    return Promise.resolve(this.#queue.shift());
  }
  close(): void {}
}

const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff];
const u32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const opt = (code: number, body: number[]) => [...u16(code), ...u16(body.length), ...body];
const v6 = (last: number) => [0xfd, 0, ...new Array(13).fill(0), last];

/** A server message for `to`, with options as the test wants them. */
function server(
  type: number,
  to: Dhcp6Message,
  o: {
    sid?: number;
    pref?: number;
    addr?: number;
    valid?: number;
    t1?: number;
    t2?: number;
    status?: number;
    iaid?: number;
  } = {},
): Uint8Array {
  const id = to.transactionId;
  const out = [type, (id >> 16) & 0xff, (id >> 8) & 0xff, id & 0xff];
  out.push(...opt(DHCP6_OPT.CLIENTID, [...to.clientId!]));
  out.push(...opt(DHCP6_OPT.SERVERID, [0, 3, 0, 1, 2, 0, 0, 0, 0, o.sid ?? 1]));
  if (o.pref !== undefined) out.push(...opt(DHCP6_OPT.PREFERENCE, [o.pref]));
  const valid = o.valid ?? 1000;
  const ia = [...u32(o.iaid ?? IAID), ...u32(o.t1 ?? 300), ...u32(o.t2 ?? 600)];
  if (o.status !== undefined) ia.push(...opt(DHCP6_OPT.STATUS_CODE, [...u16(o.status), 0x78]));
  else ia.push(...opt(DHCP6_OPT.IAADDR, [...v6(o.addr ?? 0x10), ...u32(valid), ...u32(valid)]));
  out.push(...opt(DHCP6_OPT.IA_NA, ia));
  out.push(...opt(DHCP6_OPT.DNS_SERVERS, v6(0x53)));
  out.push(...opt(DHCP6_OPT.DOMAIN_LIST, [3, 0x6c, 0x61, 0x6e, 0]));
  return Uint8Array.from(out);
}

/** A server that advertises and replies like dnsmasq. */
const plain = (m: Dhcp6Message) =>
  m.type === DHCP6_TYPE.SOLICIT
    ? [server(DHCP6_TYPE.ADVERTISE, m)]
    : m.type === DHCP6_TYPE.RELEASE
    ? []
    : [server(DHCP6_TYPE.REPLY, m)];

function rig(answer: (m: Dhcp6Message) => Uint8Array[] = plain) {
  const socket = new ScriptedSocket(answer);
  const clock = new FakeClock();
  const events: string[] = [];
  let xid = 0x100;
  const client = new Dhcp6Client({
    link: "eth0",
    duid: DUID,
    iaid: IAID,
    openSocket: () => socket,
    xid: () => xid++,
    random: () => 0.5,
    onChange: (what) => events.push(what),
  });
  return { socket, clock, events, client, step: () => client.step(clock, SIGNAL) };
}

Deno.test("solicit, advertise, request, reply: a /128 with DNS servers and search list", async () => {
  const r = rig();
  const wait = await r.step();
  assert.equal(r.client.state, "bound");
  assert.deepEqual(r.socket.sent.map((s) => s.m.type), [DHCP6_TYPE.SOLICIT, DHCP6_TYPE.REQUEST]);
  assert.deepEqual(r.socket.sent.map((s) => `${s.to}:${s.port}`), [
    "ff02::1:2:547",
    "ff02::1:2:547",
  ]);
  const req = r.socket.sent[1].m;
  assert.deepEqual(req.serverId, Uint8Array.from([0, 3, 0, 1, 2, 0, 0, 0, 0, 1]));
  assert.equal(req.iaNa?.iaid, IAID);
  assert.equal(req.iaNa?.addresses[0].address, "fd00::10");
  const l = r.client.lease!;
  assert.equal(`${l.address}/${l.prefixLen}`, "fd00::10/128");
  assert.deepEqual(l.dnsServers, ["fd00::53"]);
  assert.deepEqual(l.domains, ["lan"]);
  assert.equal(wait, 300_000, "next step at T1");
  assert.deepEqual(r.events, ["acquired"]);
});

Deno.test("the advertise with the highest preference wins; 255 is taken at once", async () => {
  const r = rig((m) =>
    m.type === DHCP6_TYPE.SOLICIT
      ? [
        server(DHCP6_TYPE.ADVERTISE, m, { sid: 1, pref: 10, addr: 0x11 }),
        server(DHCP6_TYPE.ADVERTISE, m, { sid: 2, pref: 200, addr: 0x22 }),
        server(DHCP6_TYPE.ADVERTISE, m, { sid: 3, addr: 0x33 }),
      ]
      : [server(DHCP6_TYPE.REPLY, m, { sid: m.serverId![9], addr: 0x22 })]
  );
  await r.step();
  assert.equal(r.client.lease?.address, "fd00::22");
  assert.equal(r.socket.sent[1].m.serverId![9], 2);
});

Deno.test("NoAddrsAvail advertises, foreign transactions and garbage are ignored; retransmits back off to a bound", async () => {
  const r = rig((m) => [
    server(DHCP6_TYPE.ADVERTISE, m, { status: STATUS.NO_ADDRS_AVAIL }),
    server(DHCP6_TYPE.ADVERTISE, { ...m, transactionId: m.transactionId + 1 }),
    server(DHCP6_TYPE.ADVERTISE, m, { iaid: IAID + 1 }),
    Uint8Array.from([2, 0, 1]),
    new Uint8Array(5000),
  ]);
  const waits: number[] = [];
  for (let i = 0; i < 16; i++) {
    waits.push(await r.step());
    await r.clock.advance(waits.at(-1)!);
  }
  assert.equal(r.client.state, "soliciting");
  assert.equal(new Set(r.socket.sent.map((s) => s.m.transactionId)).size, 1, "one transaction");
  assert.equal(waits[0], 1050, "IRT + 5% (RAND in [0, 0.1] for the first SOLICIT)");
  assert.equal(waits[1], 2100);
  assert.equal(Math.max(...waits), 3_600_000, "capped at SOL_MAX_RT");
});

Deno.test("a REQUEST unanswered REQ_MAX_RC times goes back to SOLICIT", async () => {
  const r = rig((m) => m.type === DHCP6_TYPE.SOLICIT ? [server(DHCP6_TYPE.ADVERTISE, m)] : []);
  for (let i = 0; i < 11; i++) await r.clock.advance(await r.step());
  const types = r.socket.sent.map((s) => s.m.type);
  const again = types.lastIndexOf(DHCP6_TYPE.SOLICIT);
  assert.ok(again > 0, "solicits again");
  assert.equal(types.slice(0, again).filter((t) => t === DHCP6_TYPE.REQUEST).length, 10);
});

Deno.test("renew at T1 to the server, rebind at T2 to any, expiry drops the lease", async () => {
  let answer = true;
  const r = rig((m) => (answer || m.type === DHCP6_TYPE.SOLICIT ? plain(m) : []));
  await r.clock.advance(await r.step());
  assert.equal(await r.step(), 300_000, "renewed: T1 again");
  const renew = r.socket.sent.at(-1)!.m;
  assert.equal(renew.type, DHCP6_TYPE.RENEW);
  assert.ok(renew.serverId, "RENEW names the server");
  assert.equal(renew.iaNa?.addresses[0].address, "fd00::10");
  assert.deepEqual(r.events, ["acquired", "renewed"]);

  answer = false;
  await r.clock.advance(300_000);
  let wait = await r.step();
  assert.equal(r.client.state, "renewing");
  assert.equal(wait, 10_000, "REN_TIMEOUT");
  while (r.client.state === "renewing") {
    await r.clock.advance(wait);
    wait = await r.step();
  }
  assert.equal(r.client.state, "rebinding");
  const rebind = r.socket.sent.at(-1)!.m;
  assert.equal(rebind.type, DHCP6_TYPE.REBIND);
  assert.equal(rebind.serverId, undefined, "REBIND names no server");
  while (r.client.lease) {
    await r.clock.advance(wait);
    wait = await r.step();
  }
  assert.deepEqual(r.events, ["acquired", "renewed", "expired"]);
  const types = r.socket.sent.map((s) => s.m.type);
  assert.ok(
    types.lastIndexOf(DHCP6_TYPE.SOLICIT) > types.lastIndexOf(DHCP6_TYPE.REBIND),
    "starts over",
  );
});

Deno.test("a REPLY with NoAddrsAvail refuses; a malformed REPLY is ignored", async () => {
  let bad = true;
  const r = rig((m) =>
    m.type === DHCP6_TYPE.SOLICIT
      ? [server(DHCP6_TYPE.ADVERTISE, m)]
      : bad
      ? [Uint8Array.from([7, ...u16(0), 0, 0, 1, 0, 200])]
      : [server(DHCP6_TYPE.REPLY, m, { status: STATUS.NO_ADDRS_AVAIL })]
  );
  await r.step();
  assert.equal(r.client.state, "requesting", "garbage is no reply");
  bad = false;
  await r.clock.advance(5000);
  await r.step();
  assert.ok(r.events.includes("refused"));
  assert.equal(r.client.lease, undefined);
});

Deno.test("release sends RELEASE with zero lifetimes and forgets the lease", async () => {
  const r = rig();
  await r.step();
  await r.client.release();
  const rel = r.socket.sent.at(-1)!.m;
  assert.equal(rel.type, DHCP6_TYPE.RELEASE);
  assert.deepEqual(rel.iaNa?.addresses, [{ address: "fd00::10", preferred: 0, valid: 0 }]);
  assert.ok(rel.serverId);
  assert.equal(r.client.lease, undefined);
  assert.equal(r.client.state, "soliciting");
});

Deno.test("refusals in a row pause the next SOLICIT 1 s, 2 s, 4 s; a binding resets the pause", async () => {
  let refuse = true;
  const r = rig((m) =>
    m.type === DHCP6_TYPE.SOLICIT
      ? [server(DHCP6_TYPE.ADVERTISE, m)]
      : refuse
      ? [server(DHCP6_TYPE.REPLY, m, { status: STATUS.NO_ADDRS_AVAIL })]
      : plain(m)
  );
  const waits: number[] = [];
  for (let i = 0; i < 3; i++) {
    waits.push(await r.step());
    await r.clock.advance(waits.at(-1)!);
  }
  assert.deepEqual(waits, [1000, 2000, 4000]);
  assert.equal(r.socket.sent.filter((s) => s.m.type === DHCP6_TYPE.SOLICIT).length, 3);
  assert.equal(await r.step(), 8000, "a fourth refusal: 8 s");
  refuse = false;
  await r.clock.advance(8000);
  await r.step();
  assert.equal(r.client.state, "bound");
  await r.client.release();
  refuse = true;
  assert.equal(await r.step(), 1000, "bound once: the pause starts over");
});
