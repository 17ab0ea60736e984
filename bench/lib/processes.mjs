/**
 * Child processes of the benchmark: spawned with a log file each, ended by their own pid (never
 * by name), and all ended again on the way out, whatever happened.
 */
import { spawn } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { createInterface } from "node:readline"

const children = new Set()

/** A port that was free a moment ago (the child binds it; the window for a clash is tiny). */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const tail = (path, lines = 20) => {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return "(no log)"
  }
}

const track = (child, name, logPath) => {
  const entry = { child, name, logPath, exited: false, code: null, signal: null }
  children.add(entry)
  entry.exit = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      entry.exited = true
      entry.code = code
      entry.signal = signal
      children.delete(entry)
      resolve({ code, signal })
    })
  })
  return entry
}

/**
 * Spawns `node <args>` whose first stdout line is `{"ready":true,...}` (bench/upstream.mjs,
 * bench/proxy.mjs, bench/pgcount.mjs); resolves with that object. Later output goes to the log.
 */
export const spawnReadyLine = (name, args, logPath, timeoutMs = 20_000, env = {}) =>
  new Promise((resolve, reject) => {
    const log = openSync(logPath, "w")
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", log], env: { ...process.env, ...env } })
    closeSync(log)
    const entry = track(child, name, logPath)
    const lines = createInterface({ input: child.stdout })
    const timer = setTimeout(() => reject(new Error(`${name}: not ready after ${timeoutMs} ms\n${tail(logPath)}`)), timeoutMs)
    lines.once("line", (line) => {
      clearTimeout(timer)
      try {
        const ready = JSON.parse(line)
        // Keep draining stdout so that the child never blocks on a full pipe.
        child.stdout.resume()
        resolve({ ...ready, pid: child.pid, entry })
      } catch {
        reject(new Error(`${name}: unexpected first line: ${line}`))
      }
    })
    entry.exit.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready\n${tail(logPath)}`))
    })
  })

/**
 * Spawns a server whose readiness is a 200 from `readyUrl` (polled with a short timeout per
 * attempt: the server listens before its handler is attached). stdout and stderr go to the log.
 */
export const spawnServer = async (name, args, env, logPath, readyUrl, timeoutMs = 90_000) => {
  const log = openSync(logPath, "w")
  const child = spawn(process.execPath, args, { stdio: ["ignore", log, log], env })
  closeSync(log)
  const entry = track(child, name, logPath)
  const started = performance.now()
  while (performance.now() - started < timeoutMs) {
    if (entry.exited) throw new Error(`${name} exited (code ${entry.code}, signal ${entry.signal}) before it was ready\n${tail(logPath)}`)
    try {
      const res = await fetch(readyUrl, { signal: AbortSignal.timeout(300) })
      await res.arrayBuffer()
      if (res.status === 200) return { pid: child.pid, entry, startupMs: performance.now() - started }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`${name}: /readyz not 200 after ${timeoutMs} ms\n${tail(logPath)}`)
}

/**
 * Runs `node <args>` to its end, its output on ours (it prints as the benchmark does); ended
 * with the others on the way out. Resolves with its exit code and signal.
 */
export const runToEnd = (name, args) => {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"] })
  return track(child, name, undefined).exit
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export const stop = async (entry, graceMs = 5_000) => {
  if (entry.exited) return entry.exit
  try {
    process.kill(entry.child.pid, "SIGTERM")
  } catch {
    return entry.exit
  }
  const timer = setTimeout(() => {
    try {
      process.kill(entry.child.pid, "SIGKILL")
    } catch {
      // gone already
    }
  }, graceMs)
  const result = await entry.exit
  clearTimeout(timer)
  return result
}

/** Ends every child still running (used on the way out, also after a failure). */
export const stopAll = () => Promise.all([...children].map((entry) => stop(entry)))

/** Resident memory of a process, from /proc/<pid>/status (Linux), in bytes. */
export const memoryOf = (pid) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (field) => {
      const match = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))
      return match ? Number(match[1]) * 1024 : undefined
    }
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") }
  } catch {
    return undefined
  }
}

export { tail }

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (USER_HZ = 100). */
export const cpuMsOf = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command name (which may hold spaces) in parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}
