# The decisions of kb's bundled rules for three symptoms — pod-pending
# (kb/rules/pending.kb), pod-crash-loop (crash-loop.kb) and pod-image-pull
# (image-pull.kb) — written as a Rego policy, for `kb/benches/peer.rs`.
#
# Input: one bundle, {"pod", "events", "node"}, as kb reads it. Output:
# `data.kb.causes`, the set of cause ids kb confirms through these three
# symptoms (its "possible" causes are not reported).
#
# How kb's three-valued logic is carried over. A fact read from the input is
# either a value or absent (a missing field or null); absent compares false,
# so a Rego rule that is undefined on it behaves the same. The facts kubectl's
# JSON cannot show (previous_log, kernel_oom_kill, image_node_pull,
# image_repo_exists) are unknown unless given under `facts` (or at the top
# level); a condition that needs them is then unknown and confirms nothing, so
# every `not` below is only ever applied to a fact that is known. Where kb
# reaches a later check only when every branch of the one before is known to
# be false (image-pull's registry-answer), that is written out. This policy
# expects `pod` and `events` to be given, as in every generated bundle (kb
# would treat a missing `events` as unknown).
#
# regorus's compiled VM (0.14.1) gives up a rule with `else` when a body before
# the last is undefined by an index into an empty list, a function that does
# not hold or a `some` that finds nothing, where the interpreter goes on to the
# `else`: such bodies test a list's count instead.
package kb

import rego.v1

# ------------------------------------------------------------------ shared

# A field that holds a value (kb: exists).
has(obj, key) if obj[key] != null

# A fact given directly, under `facts` or at the top level.
given(name) := v if {
	v := input.facts[name]
	v != null
} else := v if {
	v := input[name]
	v != null
}

_events_raw := input.events if {
	is_array(input.events)
} else := []

# The events, oldest first, as kb's adapter orders them (a stable sort by the
# first timestamp an event has).
events := [p[2] | some p in sort([[_time_key(e), i, e] | some i, e in _events_raw])]

_time_key(e) := k if {
	k := e.series.lastObservedTime
	is_string(k)
} else := k if {
	k := e.lastTimestamp
	is_string(k)
} else := k if {
	k := e.eventTime
	is_string(k)
} else := k if {
	k := e.firstTimestamp
	is_string(k)
} else := k if {
	k := e.metadata.creationTimestamp
	is_string(k)
} else := ""

last_message(list) := m if {
	n := count(list)
	n > 0
	m := list[n - 1].message
	is_string(m)
}

# The containers that run as long as the pod: the app containers, then the
# sidecars (init containers with restartPolicy Always).
container_statuses := array.concat(_app_statuses, [c | some c in init_container_statuses; c.name in sidecar_names])

_app_statuses := s if {
	s := input.pod.status.containerStatuses
	is_array(s)
} else := []

init_container_statuses := s if {
	s := input.pod.status.initContainerStatuses
	is_array(s)
} else := []

sidecar_names := {c.name | some c in input.pod.spec.initContainers; c.restartPolicy == "Always"}

pod_conditions := c if {
	c := input.pod.status.conditions
	is_array(c)
} else := []

default pod_statuses_shown := false

pod_statuses_shown if input.pod.status.containerStatuses != null

pod_statuses_shown if input.pod.status.initContainerStatuses != null

pod_on_node_events if {
	some e in events
	e.reason in {
		"Scheduled", "FailedAttachVolume", "SuccessfulAttachVolume", "FailedMount",
		"FailedCreatePodSandBox", "SandboxChanged", "Pulling", "Pulled", "Created", "Started",
		"BackOff", "Unhealthy", "Killing", "FailedPostStartHook", "ErrImageNeverPull", "InspectFailed",
	}
}

pod_on_node_events if {
	some e in events
	e.source.component == "kubelet"
}

# ----------------------------------------------------------------- pending

# The API server's SchedulingGated condition is not the scheduler's.
unschedulable if {
	some c in pod_conditions
	c.type == "PodScheduled"
	c.status == "False"
	c.reason != "SchedulingGated"
}

_sched_event(e) if e.reason == "FailedScheduling"

_sched_event(e) if {
	not has(e, "reason")
	regex.match(`^(0/\d+ nodes are available|No nodes are available that match)`, e.message)
}

scheduling_events := [e | some e in events; _sched_event(e)]

scheduling_message := m if {
	conds := [c | some c in pod_conditions; c.type == "PodScheduled"; c.status == "False"; c.reason != "SchedulingGated"]
	count(conds) > 0
	m := conds[0].message
	is_string(m)
} else := m if {
	m := last_message(scheduling_events)
}

# Every reason a node being unavailable, but for the control-plane nodes' taint.
nodes_unavailable if {
	regex.match(
		`^0/\d+ nodes are available: (\d+ (node\(s\) (had (untolerated )?taints? \{node\.kubernetes\.io/(not-ready|unreachable|unschedulable):[^}]*\}(, that the pod didn't tolerate)?|were unschedulable|were not ready|had (untolerated )?taints? \{node-role\.kubernetes\.io/(master|control-plane):[^}]*\}(, that the pod didn't tolerate)?)|NodeUnschedulable|NodeNotReady|PodToleratesNodeTaints)(, |\.|$) ?)+(preemption: .*)?$`,
		scheduling_message,
	)
	regex.match(`\d+ (node\(s\) (had (untolerated )?taints? \{node\.kubernetes\.io/(not-ready|unreachable|unschedulable):|were unschedulable|were not ready)|NodeUnschedulable|NodeNotReady)`, scheduling_message)
}

nodes_unavailable if contains(scheduling_message, "no nodes available to schedule pods")

scheduled_condition if {
	some c in pod_conditions
	c.type == "PodScheduled"
}

_phase_pending if input.pod.status.phase == "Pending"

_phase_exists if input.pod.status.phase != null

_node_name_exists if input.pod.spec.nodeName != null

pending if {
	_phase_pending
	unschedulable
}

pending if {
	not _node_name_exists
	not pod_on_node_events
	not pod_statuses_shown
	not kubelet_conditions_shown
	_pending_unplaced
}

kubelet_conditions_shown if {
	some c in pod_conditions
	c.type in {"Initialized", "ContainersReady", "Ready", "PodReadyToStartContainers"}
}

_pending_unplaced if _phase_pending

_pending_unplaced if {
	not _phase_exists
	unschedulable
}

_pending_unplaced if {
	not _phase_exists
	_gated
}

_pending_unplaced if {
	not _phase_exists
	count(scheduling_events) > 0
}

# check scheduling-gates, first: a gated pod is not the scheduler's yet.
causes contains "pending.scheduling-gated" if {
	pending
	_gated
}

_gated if count(input.pod.spec.schedulingGates) > 0

_gated if {
	some c in pod_conditions
	c.type == "PodScheduled"
	c.reason == "SchedulingGated"
}

# check scheduler-says, reached when no gate holds the pod: every branch that
# holds is followed.
_p_resources if regex.match(`Insufficient (cpu|memory|ephemeral-storage|hugepages-[A-Za-z0-9-]+|[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)`, scheduling_message)

_p_pods if regex.match(`Too many pods|Insufficient pods`, scheduling_message)

# A DaemonSet's pod is pinned to its node: the other nodes never match it.
_p_selector if {
	regex.match(`didn't match (Pod's )?node (affinity/)?selector|MatchNodeSelector|node\(s\) didn't match node selector`, scheduling_message)
	not _daemon_pod
}

_daemon_pod if {
	some reference in input.pod.metadata.ownerReferences
	reference.kind == "DaemonSet"
	reference.controller == true
}

_p_pod_affinity if regex.match(`didn't match pod (anti-)?affinity rules|didn't satisfy existing pods anti-affinity rules|MatchInterPodAffinity`, scheduling_message)

_p_volume_zone if regex.match(`volume node affinity conflict|no available volume zone|NoVolumeZoneConflict`, scheduling_message)

# A device's nodes tainted for the pods that need them: the taint, not a shortage.
_device_pool_tainted if {
	regex.match(`Insufficient [A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+`, scheduling_message)
	regex.match(`taints? \{([^n]|n[^o]|no[^d]|nod[^e]|node[^-.]|node-[^r]|node-r[^o]|node\.[^k])`, scheduling_message)
}

_p_unbound_pvc if regex.match(`unbound (immediate )?PersistentVolumeClaims|PersistentVolumeClaim is not bound|running PreBind plugin "VolumeBinding"|persistentvolumeclaim "[^"]+" not found|didn't find available persistent volumes to bind`, scheduling_message)

_p_host_port if regex.match(`didn't have free ports for the requested pod ports|PodFitsHostPorts`, scheduling_message)

_p_volume_limit if regex.match(`exceed max volume count|Max(EBS|GCEPD|AzureDisk|CSI|Cinder)VolumeCount`, scheduling_message)

_p_taint if {
	regex.match(`untolerated taint|that the pod didn't tolerate|PodToleratesNodeTaints`, scheduling_message)
	not nodes_unavailable
}

_scheduler_says if _p_resources

_scheduler_says if _p_pods

_scheduler_says if nodes_unavailable

_scheduler_says if _p_selector

_scheduler_says if _p_pod_affinity

_scheduler_says if _p_volume_zone

_scheduler_says if _p_unbound_pvc

_scheduler_says if _p_host_port

_scheduler_says if _p_volume_limit

_scheduler_says if _p_taint

causes contains "pending.insufficient-resources" if {
	pending
	not _gated
	_p_resources
	not _device_pool_tainted
}

causes contains "pending.too-many-pods" if {
	pending
	not _gated
	_p_pods
}

causes contains "pending.no-ready-nodes" if {
	pending
	not _gated
	nodes_unavailable
}

causes contains "pending.node-selector-mismatch" if {
	pending
	not _gated
	_p_selector
	is_object(input.pod.spec.nodeSelector)
}

causes contains "pending.affinity-unsatisfied" if {
	pending
	not _gated
	_p_selector
	is_object(input.pod.spec.affinity.nodeAffinity)
}

causes contains "pending.affinity-unsatisfied" if {
	pending
	not _gated
	_p_pod_affinity
}

causes contains "pending.volume-zone-conflict" if {
	pending
	not _gated
	_p_volume_zone
}

causes contains "pending.unbound-pvc" if {
	pending
	not _gated
	_p_unbound_pvc
}

causes contains "pending.host-port-conflict" if {
	pending
	not _gated
	_p_host_port
}

causes contains "pending.volume-limit-reached" if {
	pending
	not _gated
	_p_volume_limit
}

causes contains "pending.untolerated-taint" if {
	pending
	not _gated
	_p_taint
}

# check scheduler-tried, reached when no branch of scheduler-says holds.
causes contains "pending.scheduler-down" if {
	pending
	not _gated
	not _scheduler_says
	not scheduled_condition
	_pod_events_given
	count(scheduling_events) == 0
}

# kb's adapter takes the pod's events as not given where every event is about
# another object than the pod and its owner.
_pod_events_given if {
	is_array(input.events)
	count(input.events) == 0
}

_pod_events_given if {
	some e in input.events
	not _about_another_object(e)
}

_about_another_object(e) if {
	name := e.involvedObject.name
	is_string(name)
	name != input.pod.metadata.name
	name != object.get(input, ["owner", "metadata", "name"], "")
	every ref in object.get(input.pod.metadata, "ownerReferences", []) {
		name != ref.name
	}
}

# -------------------------------------------------------------- crash loop

_crash_looping := [c | some c in container_statuses; c.state.waiting.reason == "CrashLoopBackOff"]

_terminated(c) if c.lastState.terminated != null

_terminated(c) if c.state.terminated != null

_restarted := [c | some c in container_statuses; _restarted_and_terminated(c)]

_restarted_and_terminated(c) if {
	c.restartCount > 0
	_terminated(c)
}

# Without a restart count, a Last State shows the container has run before.
_restarted_and_terminated(c) if {
	not has(c, "restartCount")
	c.lastState.terminated != null
}

_start_refused_statuses := [c | some c in container_statuses; c.lastState.terminated.reason in {"StartError", "ContainerCannotRun"}]

crashing_container := c if {
	count(_crash_looping) > 0
	c := _crash_looping[0]
	is_object(c)
} else := c if {
	count(_restarted) > 0
	c := _restarted[0]
	is_object(c)
} else := c if {
	c := _start_refused_statuses[0]
	is_object(c)
}

exit_code := x if {
	x := crashing_container.state.terminated.exitCode
	is_number(x)
} else := x if {
	x := crashing_container.lastState.terminated.exitCode
	is_number(x)
}

termination_reason := x if {
	x := crashing_container.state.terminated.reason
	is_string(x)
} else := x if {
	x := crashing_container.lastState.terminated.reason
	is_string(x)
}

termination_message := x if {
	x := crashing_container.state.terminated.message
	is_string(x)
} else := x if {
	x := crashing_container.lastState.terminated.message
	is_string(x)
}

_failed_or_unnamed(e) if e.reason == "Failed"

_failed_or_unnamed(e) if not has(e, "reason")

_start_refused(m) if contains(m, "failed to start container")

_start_refused(m) if contains(m, "failed to create containerd task")

# The last run ended with a reason other than a refused start.
last_run_started if {
	is_string(termination_reason)
	not termination_reason in {"StartError", "ContainerCannotRun"}
}

# Without the reason, a log of the run that is not the runtime's own error.
last_run_started if {
	not is_string(termination_reason)
	is_string(program_output)
	not regex.match(`exec user process caused|OCI runtime \w+ failed|starting container process caused`, program_output)
}

start_failure := m if {
	s := [c | some c in container_statuses; c.lastState.terminated.reason in {"StartError", "ContainerCannotRun"}]
	count(s) > 0
	m := s[0].lastState.terminated.message
	is_string(m)
} else := m if {
	s := [c | some c in container_statuses; c.state.waiting.reason in {"RunContainerError", "CreateContainerError"}]
	count(s) > 0
	m := s[0].state.waiting.message
	is_string(m)
} else := m if {
	m := last_message([e | some e in events; _failed_or_unnamed(e); _start_refused(e.message)])
}

previous_log := v if {
	v := given("previous_log")
	is_string(v)
}

program_output := m if {
	m := termination_message
	is_string(m)
} else := m if {
	m := previous_log
}

_crash_loop_backoff if {
	some c in container_statuses
	c.state.waiting.reason == "CrashLoopBackOff"
}

default liveness_killed := false

liveness_killed if {
	some e in events
	_killing_or_unnamed(e)
	contains(e.message, "failed liveness probe")
}

liveness_killed if {
	some e in events
	_unhealthy_or_unnamed(e)
	startswith(e.message, "Liveness probe failed")
}

liveness_killed if {
	_liveness_kill_unsaid_shown
	given("unhealthy_liveness") == true
}

# crash-loop.kb's liveness_kill_unsaid, but for its last operand, the fact
# unhealthy_liveness: where that is not given, kb confirms neither a liveness
# kill nor a program exiting by itself.
_liveness_kill_unsaid_shown if {
	some e in events
	e.reason == "Unhealthy"
	not has(e, "message")
	some c in array.concat(object.get(input.pod.spec, "containers", []), object.get(input.pod.spec, "initContainers", []))
	c.name == crashing_container.name
	has(c, "livenessProbe")
	_ended_as_killed
}

_ended_as_killed if exit_code in {0, 137, 143}

_ended_as_killed if not exit_code

default startup_probe_killed := false

startup_probe_killed if {
	some e in events
	_killing_or_unnamed(e)
	contains(e.message, "failed startup probe")
}

startup_probe_killed if {
	some e in events
	_unhealthy_or_unnamed(e)
	startswith(e.message, "Startup probe failed")
	_signal_or_no_exit
}

_signal_or_no_exit if exit_code in {137, 143}

_signal_or_no_exit if not is_number(exit_code)

default probe_killed := false

probe_killed if liveness_killed

probe_killed if startup_probe_killed

_killing_or_unnamed(e) if e.reason == "Killing"

_killing_or_unnamed(e) if not has(e, "reason")

_unhealthy_or_unnamed(e) if e.reason == "Unhealthy"

_unhealthy_or_unnamed(e) if not has(e, "reason")

node_memory_pressure if {
	some c in input.node.status.conditions
	c.type == "MemoryPressure"
	c.status == "True"
}

crash_restart_events if {
	some e in events
	_crash_restart_message(e.message)
}

_crash_restart_message(m) if startswith(m, "Back-off restarting failed")

_crash_restart_message(m) if contains(m, "failed liveness probe")

_crash_restart_message(m) if contains(m, "failed startup probe")

_crash_restart_message(m) if startswith(m, "Liveness probe failed")

_crash_restart_message(m) if {
	_start_refused(m)
	not contains(m, "create pod sandbox")
}

# hook-failure.kb's hook_post_start_failed, which crash-loop reads.
hook_post_start_defined if {
	some c in input.pod.spec.containers
	c.lifecycle.postStart != null
}

default hook_post_start_failed := false

hook_post_start_failed if {
	not _post_start_ruled_out
	_post_start_failure_seen
}

_post_start_ruled_out if {
	input.pod.spec.containers != null
	not hook_post_start_defined
}

_post_start_failure_seen if {
	some c in container_statuses
	c.state.waiting.reason == "PostStartHookError"
}

_post_start_failure_seen if {
	some e in events
	e.reason == "FailedPostStartHook"
}

_post_start_failure_seen if {
	some e in events
	e.reason == "Killing"
	e.message == "FailedPostStartHook"
}

_post_start_failure_seen if {
	some e in events
	not has(e, "reason")
	regex.match(`^(Exec|HTTP) lifecycle hook .* failed - error:|^PostStartHook failed$`, e.message)
}

crash_loop if _crash_loop_backoff

crash_loop if {
	_restarted_count
	is_number(exit_code)
	not _container_lost
}

crash_loop if {
	_restarted_count
	is_string(termination_reason)
	not _container_lost
}

# A container the runtime lost track of did not exit on its own.
_container_lost if termination_reason == "ContainerStatusUnknown"

_restarted_count if crashing_container.restartCount > 0

_restarted_count if {
	not has(crashing_container, "restartCount")
	crashing_container.lastState.terminated != null
}

crash_loop if {
	not pod_statuses_shown
	crash_restart_events
}

# A log pasted without the pod's status shows a run that ended; with neither the pod
# nor its events, kb cannot tell the statuses were left out.
crash_loop if {
	not pod_statuses_shown
	_pod_or_events_given
	is_string(previous_log)
}

_pod_or_events_given if is_object(input.pod)

_pod_or_events_given if is_array(input.events)

# check last-run: every branch that holds is followed.
_oom_killed if termination_reason == "OOMKilled"

_app_exit if {
	exit_code >= 1
	exit_code <= 125
}

# 128 and 193-255 are the program's own too, unless the runtime refused the start.
_app_exit if {
	_own_high_exit
	not termination_reason in {"StartError", "ContainerCannotRun"}
}

_own_high_exit if exit_code == 128

_own_high_exit if {
	exit_code >= 193
	exit_code <= 255
}

causes contains "crash.oom-limit" if {
	crash_loop
	_oom_killed
}

# Signals the process raised on itself: the kubelet sends only SIGTERM and SIGKILL.
causes contains "crash.cpu-unsupported" if {
	crash_loop
	exit_code == 132
}

causes contains "crash.segfault" if {
	crash_loop
	exit_code in {133, 134, 135, 136, 139}
}

causes contains "hook.post-start-failed" if {
	crash_loop
	hook_post_start_failed
}

causes contains "crash.liveness-probe" if {
	crash_loop
	liveness_killed
}

causes contains "crash.startup-probe" if {
	crash_loop
	startup_probe_killed
}

causes contains "crash.mount-target-missing" if {
	crash_loop
	not last_run_started
	contains(start_failure, "volume-subpaths")
	contains(start_failure, "no such file or directory")
}

causes contains "crash.read-only-filesystem" if {
	crash_loop
	not last_run_started
	contains(start_failure, "read-only file system")
	not contains(start_failure, "mount through procfd")
}

# error.kb's error_mount_refused, which crash-loop.kb reads for a start refused.
causes contains "error.invalid-volume-mount" if {
	crash_loop
	not last_run_started
	regex.match(`mount through procfd|\(via /proc/self/fd/[0-9]+\)|dstFd=/proc/thread-self/fd/|cannot be mounted because it is (located )?inside|not of type proc|Are you trying to mount a directory onto a file \(or vice-versa\)`, error_message)
}

# exec_format_error, where known to be true.
_exec_format_error if contains(start_failure, "exec format error")

_exec_format_error if contains(program_output, "exec format error")

causes contains "crash.wrong-architecture" if {
	crash_loop
	_exec_format_error
	_exec_format_exit
}

_exec_format_exit if {
	not last_run_started
	is_string(start_failure)
}

_exec_format_exit if not is_number(exit_code)

_exec_format_exit if _app_exit

# A runtime that cannot start any container: its shim is missing or of another version.
causes contains "creating.runtime-broken-install" if {
	crash_loop
	not last_run_started
	regex.match(`binary not installed "containerd-shim|unsupported shim version|failed to start shim`, start_failure)
}

causes contains "error.args-without-command" if {
	crash_loop
	error_first_arg_run
}

causes contains "crash.command-not-found" if {
	crash_loop
	_command_not_found
	not error_first_arg_run
}

_command_not_found if exit_code == 127

_command_not_found if {
	not last_run_started
	regex.match(`executable file not found|exec: .*no such file or directory`, start_failure)
}

# runc before 1.0 failed the exec inside the container: its words reach the log.
_command_not_found if regex.match(`(?m)exec user process caused:? "?no such file or directory|bad interpreter: No such file or directory|^exec \S+: no such file or directory`, program_output)

causes contains "crash.command-not-executable" if {
	crash_loop
	_command_not_executable
}

_command_not_executable if exit_code == 126

_command_not_executable if {
	not last_run_started
	regex.match(`exec: .*permission denied`, start_failure)
}

_command_not_executable if regex.match(`(?m)exec user process caused:? "?permission denied|^(\S*/)?(ba|da|a)?sh: (line )?([0-9]+: )?/\S+: Permission denied$`, program_output)

# error.kb's error_first_arg_run: args without command, and the runtime looked
# for a program named after the first of them, or named like an option.
error_first_arg_run if regex.match(`exec: \\?"-[^"\\]*\\?": (executable file not found|no such file or directory)`, error_message)

error_first_arg_run if {
	spec := _error_container_spec
	not has(spec, "command")
	is_array(spec.args)
	m := regex.find_all_string_submatch_n(`exec: \\?"([^"\\]*)\\?": (executable file not found|no such file or directory)`, error_message, 1)
	m[0][1] == spec.args[0]
}

_error_waiting_reasons := {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}

_error_refused_reasons := {"StartError", "ContainerCannotRun"}

_error_statuses := array.concat(init_container_statuses, _app_statuses)

_error_waiting := c if {
	s := [c | some c in init_container_statuses; c.state.waiting.reason in _error_waiting_reasons]
	count(s) > 0
	c := s[0]
} else := c if {
	s := [c | some c in _app_statuses; c.state.waiting.reason in _error_waiting_reasons]
	c := s[0]
}

_refused(c) if c.lastState.terminated.reason in _error_refused_reasons

_refused(c) if c.state.terminated.reason in _error_refused_reasons

_error_start_failed := c if {
	s := [c | some c in init_container_statuses; _refused(c)]
	count(s) > 0
	c := s[0]
} else := c if {
	s := [c | some c in _app_statuses; _refused(c)]
	c := s[0]
}

_own_error(t) if {
	t.reason == "Error"
	t.exitCode >= 1
	t.exitCode <= 125
}

_error_exited_now := c if {
	s := [c | some c in _app_statuses; _own_error(c.state.terminated)]
	c := s[0]
}

_error_exited_before := c if {
	s := [c | some c in _app_statuses; not c.state.terminated; _own_error(c.lastState.terminated)]
	c := s[0]
}

_error_container_name := n if {
	n := _error_waiting.name
} else := n if {
	n := _error_start_failed.name
} else := n if {
	n := _error_exited_now.name
} else := n if {
	n := _error_exited_before.name
}

_error_container_spec := c if {
	s := [c | some c in input.pod.spec.initContainers; c.name == _error_container_name]
	count(s) > 0
	c := s[0]
} else := c if {
	s := [c | some c in input.pod.spec.containers; c.name == _error_container_name]
	c := s[0]
}

error_message := m if {
	m := _error_waiting.state.waiting.message
	is_string(m)
} else := m if {
	m := _error_start_failed.lastState.terminated.message
	is_string(m)
} else := m if {
	m := _error_start_failed.state.terminated.message
	is_string(m)
} else := m if {
	failed := [e | some e in events; _failed_or_unnamed(e); regex.match(`^Error: \S+\s`, e.message)]
	count(failed) > 0
	m := regex.find_all_string_submatch_n(`(?s)^Error: (.+)$`, failed[count(failed) - 1].message, 1)[0][1]
}

causes contains "crash.no-foreground-process" if {
	crash_loop
	exit_code == 0
	_restarts_always
	not hook_post_start_failed
	_liveness_kill_ruled_out
}

_liveness_kill_ruled_out if not _liveness_kill_unsaid_shown

_liveness_kill_ruled_out if given("unhealthy_liveness") == false

_restarts_always if input.pod.spec.restartPolicy == "Always"

_restarts_always if _crash_loop_backoff

# check program-said, entered on an application exit, or on a log of a run
# the kubelet did not kill or fail to start when no exit code is known.
_program_said if {
	_app_exit
	not _exec_format_error
	not _command_refused_in_log
}

_program_said if {
	not is_number(exit_code)
	is_string(program_output)
	not is_string(start_failure)
	not probe_killed
	not _exec_format_error
	not _command_refused_in_log
}

_command_refused_in_log if regex.match(`(?m)exec user process caused|bad interpreter: No such file or directory|^exec \S+: no such file or directory|^(\S*/)?(ba|da|a)?sh: (line )?([0-9]+: )?/\S+: (Permission denied|not found|No such file or directory)$`, program_output)

# A shell or an entrypoint script that outlives the crash reports it, then exits itself.
_said contains "crash.cpu-unsupported" if {
	_program_said
	regex.match(`requires (a )?CPU with |compiled to use \S+ instructions, but these aren't available|Illegal instruction|illegal hardware instruction`, program_output)
}

_said contains "crash.segfault" if {
	_program_said
	regex.match(`Segmentation fault|double free or corruption|free\(\): (invalid|double free|corrupted)|malloc\(\): |corrupted size vs\. prev_size|stack smashing detected|buffer overflow detected`, program_output)
}

_said contains "error.rbac-forbidden" if {
	_program_said
	regex.match(`forbidden: User\s+\\?"system:serviceaccount:[^"\\]+\\?"\s+cannot`, program_output)
}

_said contains "crash.dns-forwarding-loop" if {
	_program_said
	regex.match(`plugin/loop: (Loop \(\S+ -> \S+\) detected|Seen "HINFO IN \S+" more than twice, loop detected)`, program_output)
}

_said contains "crash.node-pod-cidr-missing" if {
	_program_said
	regex.match(`(?i)pod ?cidr not (assigned|available|present)`, program_output)
}

_said contains "crash.sysctl-denied" if {
	_program_said
	_sysctl_refused
}

_sysctl_refused if regex.match(`(?i)(open|write) /proc/sys/\S+: (permission denied|read-only file system|operation not permitted)|sysctl: (permission denied on key|(error )?setting key)`, program_output)

_said contains "crash.dns-failure" if {
	_program_said
	regex.match(`no such host|Name or service not known|Temporary failure in name resolution|server misbehaving|Could not resolve host|getaddrinfo ENOTFOUND|UnknownHostException|lookup \S+ on \S+:53: |host not found in (upstream|resolver) `, program_output)
}

_said contains "crash.dependency-unreachable" if {
	_program_said
	regex.match(`(?i)connection refused|connection to \S+ refused|ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|connection timed out|no route to host|dial tcp \S+: i/o timeout|Communications link failure|Can't connect to MySQL server|could not connect to server`, program_output)
}

_access_denied if regex.match(`(?i)permission denied|operation not permitted|EACCES|AccessDeniedException|lock file on a read-only directory`, program_output)

_said contains "crash.volume-permission-denied" if {
	_program_said
	_denied_on_volume
}

_denied_on_volume if {
	_access_denied
	some spec in array.concat(object.get(input.pod.spec, "containers", []), object.get(input.pod.spec, "initContainers", []))
	spec.name == crashing_container.name
	some mount in spec.volumeMounts
	contains(program_output, mount.mountPath)
}

_said contains "crash.volume-permission-denied" if {
	_program_said
	_access_denied
	not input.pod.spec.containers
	given("denied_path_on_volume") == true
}

_said contains "crash.ipv6-unsupported" if {
	_program_said
	regex.match(`(?i)address family not supported by protocol|(?-i:Can't connect to \('::', [0-9]+\))`, program_output)
}

_said contains "crash.config-invalid" if {
	_program_said
	regex.match(`(?i)(config|configuration|settings)[^\n]*(parse|pars(ing|e) error|invalid|malformed|missing|required|not found|unknown (field|key))|(environment variable|env var)[^\n]*(required|missing|not set|must be set)|(required|missing) (environment variable|env var)|(?-i:KeyError: '[A-Z][A-Z0-9_]+')|(error|fail(ed|ure)?)( to)? (pars(e|ing)|decod(e|ing)|unmarshal(l?ing)?) (the )?(config|configuration|settings)|yaml: line \d+|yaml: unmarshal errors|field \w+ not found in type |json: cannot unmarshal|toml: |flag provided but not defined: |(?-i:unknown (shorthand )?flag: )|(?m-i:^[Uu]sage:)|(?-i:tcp://[0-9.]+:[0-9]+[^\n]*(invalid|NumberFormatException|not a number)|(parsing|parse|invalid)[^\n]*tcp://[0-9.]+:[0-9]+)`, program_output)
}

_said contains "crash.writes-read-only" if {
	_program_said
	regex.match(`(?i)read-only file system|\bEROFS\b|\[Errno 30\]`, program_output)
	not _sysctl_refused
}

# Under a read-only root, whatever errno the program reports for what it could not create.
_said contains "crash.writes-read-only" if {
	_program_said
	_root_read_only
	regex.match(`(?i)\b(mkdir|mkdtemp|cannot create|can't create|failed to create|unable to create)\b[^\n]*(ENOENT|EACCES|no such file or directory|permission denied)|\b(ENOENT|EACCES)\b[^\n]*, mkdir '`, program_output)
	not _denied_on_volume
}

_root_read_only if {
	some spec in array.concat(object.get(input.pod.spec, "containers", []), object.get(input.pod.spec, "initContainers", []))
	spec.name == crashing_container.name
	spec.securityContext.readOnlyRootFilesystem == true
}

_root_read_only if {
	not crashing_container.name
	some spec in input.pod.spec.containers
	spec.securityContext.readOnlyRootFilesystem == true
}

causes contains c if {
	crash_loop
	some c in _said
}

# Once it is known whether the log names a volume the program was denied.
causes contains "crash.app-error" if {
	crash_loop
	_app_exit
	not _exec_format_error
	not _said_unknown
}

# The check's else: a log that names no known cause, none of its branches unknown, and
# no postStart hook's failure (a branch of the check too).
causes contains "crash.app-error" if {
	crash_loop
	_program_said
	count(_said) == 0
	not _said_unknown
	not hook_post_start_failed
	_ended_on_error
}

# check program-error: an error exit, or, the exit code not shown, a log that says so.
_ended_on_error if _app_exit

_ended_on_error if {
	not is_number(exit_code)
	regex.match(`(?i)error|fatal|exception|panic|fail|denied|not permitted|cannot|can't|could not|couldn't|unable|refused|corrupt|bad file format|not found|invalid|in use|traceback|killed|too (low|small|high|large|many)|at least|must be|exceed|not empty|no \w+ found`, program_output)
}

# Without the pod's spec, whether a denied path is on a volume is unknown unless given.
_said_unknown if {
	_access_denied
	not input.pod.spec.containers
	not is_boolean(given("denied_path_on_volume"))
}

# kb's probe_killed is unknown, not false, where the events were not given.
_probe_kill_ruled_out if {
	is_array(input.events)
	not probe_killed
}

# check node-oom, for a SIGKILL that was neither the cgroup's OOM kill nor the kubelet's.
causes contains "crash.oom-node" if {
	crash_loop
	exit_code == 137
	not _oom_killed
	_probe_kill_ruled_out
	not hook_post_start_failed
	_node_out_of_memory
}

_node_out_of_memory if node_memory_pressure

_node_out_of_memory if given("kernel_oom_kill") == true

causes contains "crash.segfault" if {
	crash_loop
	exit_code >= 129
	exit_code <= 192
	exit_code != 132
	exit_code != 137
	_probe_kill_ruled_out
	not hook_post_start_failed
}

# -------------------------------------------------------------- image pull

image_reasons := {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull", "ImageInspectError", "RegistryUnavailable"}

image_container := c if {
	s := [c | some c in init_container_statuses; c.state.waiting.reason in image_reasons]
	count(s) > 0
	c := s[0]
	is_object(c)
} else := c if {
	s := [c | some c in container_statuses; c.state.waiting.reason in image_reasons]
	c := s[0]
	is_object(c)
}

image_event_reason := r if {
	errors := [e | some e in events; regex.match(`^Error: (ImagePullBackOff|ErrImagePull|InvalidImageName|ErrImageNeverPull|ImageInspectError|RegistryUnavailable)$`, e.message)]
	count(errors) > 0
	m := last_message(errors)
	is_string(m)
	r := trim_prefix(m, "Error: ")
} else := r if {
	m := last_message([e | some e in events; regex.match(`^Error syncing pod.* for "[^"]*" with \w+: "`, e.message)])
	is_string(m)
	r := regex.find_all_string_submatch_n(`^Error syncing pod.* for "[^"]*" with (ImagePullBackOff|ErrImagePull|InvalidImageName|ErrImageNeverPull|ImageInspectError|RegistryUnavailable): "`, m, 1)[0][1]
} else := "InvalidImageName" if {
	count([e | some e in events; regex.match(`^Failed to apply default image tag|couldn't parse image reference`, e.message)]) > 0
} else := "ErrImageNeverPull" if {
	count([e | some e in events; _never_pull_event(e)]) > 0
} else := "ImageInspectError" if {
	count([e | some e in events; startswith(e.message, "Failed to inspect image")]) > 0
} else := "ErrImagePull" if {
	count([e | some e in events; startswith(e.message, "Failed to pull image")]) > 0
} else := "ErrImagePull" if {
	count([e | some e in events; _registry_request_failed(e)]) > 0
} else := "ImagePullBackOff" if {
	some e in events
	startswith(e.message, "Back-off pulling image")
}

_never_pull_event(e) if e.reason == "ErrImageNeverPull"

_never_pull_event(e) if contains(e.message, "is not present with pull policy of Never")

image_waiting_reason := r if {
	r := image_container.state.waiting.reason
	is_string(r)
} else := r if {
	not pod_statuses_shown
	r := image_event_reason
}

image_ref := i if {
	i := image_container.image
	is_string(i)
} else := i if {
	m := last_message([e | some e in events; regex.match(`^(Failed to pull image|Back-off pulling image|Failed to apply default image tag|Failed to inspect image|Container image) ["“]`, e.message)])
	is_string(m)
	i := regex.find_all_string_submatch_n(`image (?:tag )?["“]([^"”]+)["”]`, m, 1)[0][1]
}

image_pull_policy := p if {
	s := [c | some c in input.pod.spec.initContainers; c.name == image_container.name]
	count(s) > 0
	p := s[0].imagePullPolicy
	is_string(p)
} else := p if {
	s := [c | some c in input.pod.spec.containers; c.name == image_container.name]
	p := s[0].imagePullPolicy
	is_string(p)
}

image_pull_secrets if input.pod.spec.imagePullSecrets != null

image_pull_secret_missing if {
	some e in events
	e.reason == "FailedToRetrieveImagePullSecret"
}

image_shared_registry if regex.match(`^(docker\.io|index\.docker\.io|registry-1\.docker\.io|ghcr\.io|quay\.io|registry\.gitlab\.com|gcr\.io|public\.ecr\.aws)/|^[^/]+$|^[^/.:]+/`, image_ref)

_kubelet_image_event(e) if regex.match(`^(Failed to pull image|Failed to apply default image tag|Failed to inspect image) `, e.message)

_kubelet_image_event(e) if regex.match(`^Back-off pulling image "[^"]*": \S`, e.message)

_kubelet_image_event(e) if contains(e.message, "is not present with pull policy of Never")

_kubelet_image_event(e) if e.reason == "InspectFailed"

_kubelet_image_event(e) if e.reason == "ErrImageNeverPull"

image_kubelet_error := m if {
	m := image_container.state.waiting.message
	is_string(m)
	not regex.match(`^Back-off pulling image "[^"]*"$`, m)
} else := m if {
	m := last_message([e | some e in events; contains(e.message, image_ref); _kubelet_image_event(e)])
	is_string(m)
} else := m if {
	m := last_message([e | some e in events; regex.match(`^Error syncing pod.* for "[^"]*" with (ErrImagePull|ImageInspectError): "`, e.message)])
	is_string(m)
} else := m if {
	m := last_message([e | some e in events; _registry_request_failed(e)])
}

# The tail of a pull's error quoted alone still names a call to the registry's API.
_registry_request_failed(e) if {
	regex.match(`https?://[^"\s]*/v2/[^"\s]*/(manifests|blobs)/`, e.message)
	object.get(e, "reason", "") != "FailedCreatePodSandBox"
	not contains(e.message, "sandbox")
}

# Unknown (undefined) unless the kubelet's error is at hand or a pull by hand was given.
image_error := m if {
	m := image_kubelet_error
	is_string(m)
} else := m if {
	m := given("image_node_pull")
	is_string(m)
}

# Each is true or false when image_error is known, undefined when it is not.
image_network_error := regex.match(`dial tcp|no such host|server misbehaving|TLS handshake timeout|request canceled while waiting for connection|connection reset by peer|Client\.Timeout exceeded while awaiting headers`, image_error)

image_auth_rejected := regex.match(`\b40[13]\b|(?i:unauthorized|authentication required|no basic auth credentials|failed to fetch (anonymous|oauth) token|access forbidden|not authorized)`, image_error)

image_access_denied := regex.match(`pull access denied|repository does not exist or may require|does not exist or no pull access|requested access to the resource is denied|insufficient_scope`, image_error)

image_content_corrupted := regex.match(`unknown blob|blob unknown|file integrity checksum failed|failed size validation|unexpected commit digest|filesystem layer verification failed|readlink \S+: invalid argument|blobs/sha256:[0-9a-f]+ not found`, image_error)

image_disk_full := contains(image_error, "no space left on device")

image_platform_missing := regex.match(`no match for (current )?platform|no matching manifest for|no image found in manifest list for architecture`, image_error)

# A tag without a variant for the node's platform is not missing, though containerd says NotFound.
image_manifest_missing := false if {
	image_platform_missing == true
} else := _manifest_missing_message

_manifest_missing_message := regex.match(`code = NotFound|manifest unknown|manifest for \S+ not found|: not found\b|\bimage \S+ not found|name unknown|repository name not known to registry`, image_error)

image_pull if image_waiting_reason in image_reasons

# check waiting-reason: every branch that holds is followed.
causes contains "image.invalid-name" if {
	image_pull
	image_waiting_reason == "InvalidImageName"
}

causes contains "image.never-pull" if {
	image_pull
	_w_never_pull
}

_w_never_pull if image_waiting_reason == "ErrImageNeverPull"

_w_never_pull if {
	image_pull_policy == "Never"
	contains(image_error, "is not present with pull policy of Never")
}

# cri-dockerd before 0.3.10 cannot read the images of Docker Engine 25 and later.
causes contains "creating.runtime-broken-install" if {
	image_pull
	image_waiting_reason == "ImageInspectError"
	regex.match(`Id or size of image "[^"]*" is not set`, image_error)
}

# The image's words are not needed where the node cannot run it at all.
causes contains "image.platform-mismatch" if {
	_registry_answer
	_node_windows_unasked
}

_node_windows if input.node.metadata.labels["kubernetes.io/os"] == "windows"

_node_windows if input.node.status.nodeInfo.operatingSystem == "windows"

_node_windows_unasked if {
	_node_windows
	not input.pod.spec.nodeSelector["kubernetes.io/os"] == "windows"
}

# CRI-O fails the inspection of a short name before any pull: no corruption.
causes contains "image.short-name-unresolved" if {
	image_pull
	_short_name_unresolved
}

_short_name_unresolved if regex.match(`no registries configured while trying to pull an unqualified image|short-name "[^"]*" did not resolve to an alias|short-name resolution enforced`, image_error)

causes contains "image.corrupted" if {
	image_pull
	image_waiting_reason == "ImageInspectError"
	not regex.match(`\.sock|code = Unavailable|Cannot connect to the Docker daemon|Id or size of image "[^"]*" is not set`, image_error)
	not _short_name_unresolved
}

causes contains "image.registry-unreachable" if {
	image_pull
	image_waiting_reason == "RegistryUnavailable"
}

# check registry-answer, reached when every branch of waiting-reason is known
# not to hold (one that is unknown leaves its causes possible).
_registry_answer if {
	image_pull
	not image_waiting_reason in {"InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"}
	_not_never_pull
	_not_inspect_error
	not _short_name_unresolved
}

_not_never_pull if image_pull_policy != "Never"

_not_never_pull if not image_pull_policy

_not_never_pull if {
	is_string(image_error)
	not contains(image_error, "is not present with pull policy of Never")
}

_not_inspect_error if image_waiting_reason != "ImageInspectError"

_not_inspect_error if regex.match(`\.sock|code = Unavailable|Cannot connect to the Docker daemon`, image_error)

causes contains "image.pull-throttled" if {
	_registry_answer
	contains(image_error, "pull QPS exceeded")
}

causes contains "image.registry-rate-limited" if {
	_registry_answer
	regex.match(`toomanyrequests|429 Too Many Requests|pull rate limit`, image_error)
}

causes contains "image.insecure-registry" if {
	_registry_answer
	contains(image_error, "server gave HTTP response to HTTPS client")
}

causes contains "image.untrusted-certificate" if {
	_registry_answer
	regex.match(`x509: |tls: failed to verify certificate`, image_error)
}

causes contains "image.registry-unreachable" if {
	_registry_answer
	image_network_error == true
}

causes contains "image.pull-timeout" if {
	_registry_answer
	regex.match(`context deadline exceeded|context canceled|net/http: request canceled|because of no progress|code = DeadlineExceeded|code = Canceled`, image_error)
	image_network_error == false
}

causes contains "image.corrupted" if {
	_registry_answer
	image_content_corrupted == true
}

causes contains "image.node-disk-full" if {
	_registry_answer
	image_disk_full == true
}

causes contains "image.platform-mismatch" if {
	_registry_answer
	image_platform_missing == true
}

causes contains "image.registry-auth" if {
	_registry_answer
	image_auth_rejected == true
	_private_or_with_secrets
}

_private_or_with_secrets if not image_shared_registry

_private_or_with_secrets if image_pull_secrets

# check denied-or-missing
_denied_or_missing if {
	_registry_answer
	image_access_denied == true
	image_auth_rejected == false
}

_denied_or_missing if {
	_registry_answer
	image_auth_rejected == true
	image_shared_registry
	not image_pull_secrets
}

_denied_settled if image_pull_secret_missing

_denied_settled if {
	not image_pull_secrets
	not image_shared_registry
}

causes contains "image.registry-auth" if {
	_denied_or_missing
	_denied_settled
}

# else: check repo-exists, which needs a fact kubectl's JSON does not hold.
causes contains "image.registry-auth" if {
	_denied_or_missing
	not _denied_settled
	given("image_repo_exists") == true
}

causes contains "image.not-found" if {
	_denied_or_missing
	not _denied_settled
	given("image_repo_exists") == false
}

causes contains "image.not-found" if {
	_registry_answer
	image_manifest_missing == true
	image_access_denied == false
	image_content_corrupted == false
	image_network_error == false
}
