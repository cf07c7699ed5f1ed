export function rssMb(pid: number): number;
export function childrenOf(pid: number): string[];
export function familyRssMb(pid: number): number;
export function unsharedMb(pid: number): number;
export function familyMemoryMb(pid: number): number;
export function cpuSeconds(pid: number): number;
export function mainThreadSchedule(pid: number): { runSeconds: number; waitSeconds: number };
export function pinApart(backendPid: number, servicePid: number): () => void;
