export function rssMb(pid: number): number;
export function familyRssMb(pid: number): number;
export function cpuSeconds(pid: number): number;
export function mainThreadSchedule(pid: number): { runSeconds: number; waitSeconds: number };
