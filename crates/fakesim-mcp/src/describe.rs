//! What the server and each tool tell an agent: when to call it, what it answers, and what
//! each stop reason means for the next call.

/// Instructions sent once when a client connects.
pub const INSTRUCTIONS: &str = "\
Episode tools for an SO-101 arm: a MuJoCo twin, or the real arm with the twin mirroring it. \
A session runs one episode at a time: reset_task, then get_observation / move / gripper as often \
as the step budget allows, then stop_episode, which writes the run's artifacts. Positions are \
metres in the world frame (z up, table surface at z = 0.80 m, arm base at (0, 0, 0.80) reaching \
along +x); angles are radians. Every call that returns images returns two PNG image contents: the \
fixed camera agentview first, then the wrist camera robot0_eye_in_hand. A refused call is a tool \
error whose structured content names the error (error) and says what to do (what_to_do).";

/// `list_tasks`.
pub const LIST_TASKS: &str = "\
List what can be run. Without arguments: every suite with its task count (n_tasks) and the total \
(total_tasks); start here. With suite: each task of that suite with task_index, name, instruction \
and n_init_states (valid init_state_index values are 0 .. n_init_states - 1). Callable at any \
time; it renders nothing, uses no step budget and leaves a running episode alone. Pass the chosen \
suite and task_index to reset_task. Error: unknown_suite.";

/// `reset_task`.
pub const RESET_TASK: &str = "\
Start a new episode. With no arguments the server's default scene starts, which is what you \
usually want; otherwise pass suite and task_index from list_tasks, and init_state_index for \
another seeded object layout of the same task (the same index always gives the same layout). \
Answers run (short run id), task (suite, task_index, name, instruction, init_state_index), state \
(eef_pos_m: TCP position [x, y, z] in metres; eef_rpy_rad: roll_x, pitch_y, yaw_z in radians \
about the base axes; gripper: command open/close and opening_m, the jaw-tip distance in metres), \
step and steps_left, plus both camera images. On the real arm the arm first drives to its home \
pose, which takes a few seconds. Errors: already_running (call stop_episode first), task_locked \
(the server fixes the scene: call it without arguments), unknown_suite, unknown_task, \
unknown_init_state.";

/// `get_observation`.
pub const GET_OBSERVATION: &str = "\
Look without acting: both camera images and the state (eef_pos_m, eef_rpy_rad, gripper), with \
step, steps_left and status; on a server driving two arms, arm (left or right) says whose state \
and wrist camera. Does not advance the simulation and uses no step budget. \
Error: not_running (call reset_task).";

/// `move`.
pub const MOVE: &str = "\
Move the TCP (the point between the fingertips) by delta_xyz = [dx, dy, dz] metres in the world \
frame, optionally rotating it by delta_rpy (roll_x, pitch_y, yaw_z radians about the base axes; \
omit it to keep the current orientation); on a server driving two arms, arm (left or right) says \
which arm's TCP moves, and the answer's state is that arm's. The server steers toward the target \
tick by tick and returns when a stop condition holds; action.stop_reason says which:
- reached: within 8 mm and 0.02 rad of the target. Done.
- stalled: under 1 mm of travel over the last 3 ticks without arriving. Something blocks the \
motion (the table, an object, a joint limit, or an orientation this 5-joint arm cannot take). The \
same command again does nothing new: go another way, lift, or back off first. This is how you \
notice contact.
- step_cap: the per-call tick limit came first while still moving. Call again with the remaining \
displacement in the same direction.
- budget: the episode's step budget ran out; only stop_episode is left to call.
Moves are best effort: read action.achieved_delta_xyz (what this call moved, metres) and \
action.remaining_distance_m (how far the target still is) rather than assuming the request \
happened. Answers state, action (delta_xyz, delta_rpy, executed_steps, stop_reason, \
achieved_delta_xyz, remaining_distance_m), step, steps_left, status, and both images. Errors: \
not_running, step_limit (budget already 0, nothing moved), invalid_argument; on the real arm also \
estop_latched, mirror_mode, below_table or out_of_range (a safety layer refused; the structured \
error names the layer).";

/// `gripper`.
pub const GRIPPER: &str = "\
Open or close the gripper (command: open or close; on a server driving two arms, arm: left or \
right says whose). The server keeps commanding it and watches \
the jaw opening; action.stop_reason says why it returned:
- settled: the same command ran at least 10 ticks and the opening changed under 0.5 mm over the \
last 2. The jaws are still, which is not proof of a firm grasp, a full opening or a released \
object: check state.gripper.opening_m and the images.
- step_cap: the per-call tick limit came first; the jaws may still be moving. Send the same \
command again.
- budget: the episode's step budget ran out; only stop_episode is left to call.
- no_op: the gripper already had this target and nothing was pending, so nothing ran and no \
budget was used. It says nothing about an object being held or released.
Answers state, action (command, executed_steps, stop_reason, opening_before_m, opening_after_m), \
step, steps_left, status, and both images. Errors: not_running, step_limit (budget already 0, the \
target stays as it was); on the real arm also estop_latched or mirror_mode.";

/// `stop_episode`.
pub const STOP_EPISODE: &str = "\
End the running episode and write its artifacts. Answers run, status (stopped) and artifacts: \
events (path of events.jsonl, one line per call and event), frames (the directory of every PNG \
returned) and summary (path of summary.json). Call reset_task to start another episode. \
Error: not_running.";

/// `get_session_info`.
pub const GET_SESSION_INFO: &str = "\
Where the session stands, without images or budget, callable any time (also before the first \
reset_task): run, status (idle, running or stopped), step, max_steps, steps_left, task, \
task_locked (true: reset_task takes no scene arguments) and state. While idle there is no task \
or state; default_scene then names what a reset_task without arguments starts. Use list_tasks to \
see what else exists.";
