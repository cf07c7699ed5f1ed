/** What /proc says about a process: its memory and CPU time; and where it may run. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Resident memory of one process in MiB (from /proc), 0 once it has exited. */
export function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The process ids of a process's children (the service's extraction workers); none once it has exited. */
export function childrenOf(pid) {
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return []; // it has exited
  }
  return tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean);
    } catch {
      return []; // the thread just ended
    }
  });
}

/**
 * Resident memory of a process and its child processes in MiB. Each process counts the pages it
 * shares with the others (the node binary, libraries) in full, so the sum overstates the family.
 */
export function familyRssMb(pid) {
  return rssMb(pid) + childrenOf(pid).reduce((sum, child) => sum + rssMb(child), 0);
}

/** Resident memory of a process that it does not share clean with others (RSS − Shared_Clean), in MiB. */
export function unsharedMb(pid) {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0);
    return (kb('Rss') - kb('Shared_Clean')) / 1024;
  } catch {
    return 0;
  }
}

/**
 * The memory a process and its children hold together, with the pages the children share clean with
 * it (the node binary, libraries: ~40 MB each) counted once, in MiB: the service's RSS plus each
 * child's unshared RSS. This is what a container's memory cgroup charges for them, page cache aside.
 */
export function familyMemoryMb(pid) {
  return rssMb(pid) + childrenOf(pid).reduce((sum, child) => sum + unsharedMb(child), 0);
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used, all its threads together; 0 once it has exited. */
export function cpuSeconds(pid) {
  const fields = statFields(pid); // utime and stime are the 12th and 13th
  return fields ? (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND : 0;
}

/**
 * The fields of /proc/<pid>/stat after the command name, which may itself hold spaces (the state
 * first, then the parent's id); null once the process has exited.
 */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * Seconds a process's main thread has run, and waited runnable for a CPU (the scheduler's
 * /proc schedstat): a long wait means the machine, not the process, was the bottleneck.
 */
export function mainThreadSchedule(pid) {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { runSeconds: run / 1e9, waitSeconds: wait / 1e9 };
  } catch {
    return { runSeconds: 0, waitSeconds: 0 };
  }
}

/**
 * Pins a local PostgreSQL server to the first CPU this bench may use and the service to the others:
 * on one machine, the shape of a database with a core of its own (the load generators stay free).
 * The server is its postmaster and the processes it has started (backends, workers); those it starts
 * later inherit the postmaster's CPUs. Needs two CPUs or more, `taskset` (util-linux) and the right to
 * set the server's affinity (root, or CAP_SYS_NICE). `backendPid` is any backend of the server
 * (`pg_backend_pid()`). Returns a function that gives every process the CPUs it had (those started
 * meanwhile, their parent's); a pin that fails, or a SIGINT or SIGTERM during the run, restores them too.
 */
export function pinApart(backendPid, servicePid) {
  const [databaseCpu, ...serviceCpus] = cpuIds(cpusOf(process.pid));
  if (serviceCpus.length === 0) throw new Error('pinning the database apart needs at least 2 CPUs');
  const postmaster = parentOf(backendPid);
  if (![backendPid, postmaster].every((pid) => commandOf(pid) === 'postgres'))
    throw new Error(`backend ${backendPid} is not a PostgreSQL process of this machine: the database must be local`);
  const families = [
    { parent: postmaster, cpus: String(databaseCpu) },
    { parent: servicePid, cpus: serviceCpus.join(',') },
  ];
  const saved = new Map(families.map(({ parent }) => [parent, cpusOf(parent)]));
  const restore = () => {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    // The parent first: a child it starts meanwhile then inherits its CPUs back.
    for (const { parent } of families)
      for (const pid of [parent, ...childrenOf(parent).map(Number)])
        tryTaskset(pid, saved.get(pid) ?? saved.get(parent)); // best effort: one may have ended
  };
  const onSignal = (signal) => {
    restore();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    for (const { parent, cpus } of families) {
      taskset(parent, cpus);
      for (const pid of childrenOf(parent).map(Number)) {
        const before = tryCpusOf(pid);
        if (before && tryTaskset(pid, cpus)) saved.set(pid, before);
      }
    }
  } catch (error) {
    restore();
    throw error;
  }
  return restore;
}

function taskset(pid, cpus) {
  execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
}

/** taskset for a process that may have ended: whether it was set. */
function tryTaskset(pid, cpus) {
  try {
    taskset(pid, cpus);
    return true;
  } catch {
    return false;
  }
}

/** The CPUs a process may run on, as a list (`0-3,6`), from /proc. */
function cpusOf(pid) {
  const list = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!list) throw new Error(`no Cpus_allowed_list for process ${pid}`);
  return list;
}

function tryCpusOf(pid) {
  try {
    return cpusOf(pid);
  } catch {
    return null; // it has ended
  }
}

/** The CPU ids of a list such as `0-3,6`. */
function cpuIds(list) {
  return list.split(',').flatMap((range) => {
    const [first, last = first] = range.split('-').map(Number);
    return Array.from({ length: last - first + 1 }, (_, k) => first + k);
  });
}

/** A process's parent, from /proc (0 when there is no such process). */
function parentOf(pid) {
  return Number(statFields(pid)?.[1] ?? 0);
}

/** A process's command name, from /proc ('' when there is no such process). */
function commandOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}
