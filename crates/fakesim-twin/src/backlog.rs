//! The frames waiting for the render threads: how many may wait, which callers share one
//! frame, and which frames nobody waits for any more.
//!
//! Every frame asked for is a [`FrameKey`]. A key already waiting (or being drawn) gains one
//! more waiter instead of a second drawing. At most [`FRAMES_PER_THREAD`] frames per render
//! thread wait, whoever asks: a read ([`Admission::Read`]) that would make more wait is refused
//! at once, with an estimate of when there will be room; an action that draws its images after
//! it ran (a tick, a move) reserves room for them before it runs ([`Backlog::reserve`]), and is
//! refused alike when there is none, so nothing has moved. A render thread claims a frame
//! before drawing it: a frame whose every caller has gone or is past its deadline is dropped
//! undrawn.

use crate::error::TwinError;
use crate::quality::RenderQuality;
use crate::render::Frame;
use crate::sim::RenderSnapshot;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Frames that may wait per render thread (reserved ones included) before a call is refused.
pub const FRAMES_PER_THREAD: usize = 16;

/// How a drawing is let in to the render threads.
#[derive(Debug, Clone, Copy)]
pub enum Admission<'a> {
    /// The images of a read (an observation): refused with [`TwinError::RenderBusy`] when the
    /// backlog is full, and dropped undrawn once `deadline` (if any) has passed.
    Read {
        /// When the caller stops waiting.
        deadline: Option<Instant>,
    },
    /// The images of an action that reserved room for them before it ran: never refused
    /// (the room is there), dropped only when its caller has gone.
    Reserved(&'a FrameRoom),
}

impl Admission<'_> {
    fn deadline(self) -> Option<Instant> {
        match self {
            Admission::Reserved(_) => None,
            Admission::Read { deadline } => deadline,
        }
    }
}

/// Room for some frames in the backlog, held from before an action runs until its images are
/// drawn; they count against the backlog's bound all along. Dropping it gives the room back.
pub struct FrameRoom {
    backlog: Arc<Backlog>,
    id: u64,
    frames: usize,
}

impl std::fmt::Debug for FrameRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FrameRoom({} frames)", self.frames)
    }
}

impl FrameRoom {
    /// How many frames at once the room holds.
    pub fn frames(&self) -> usize {
        self.frames
    }
}

impl Drop for FrameRoom {
    /// Gives the room back; frames of it still waiting (their caller gone before they were
    /// drawn) count as any other until they are dropped.
    fn drop(&mut self) {
        let mut table = self.backlog.lock();
        table.reserved = table.reserved.saturating_sub(self.frames);
        let mut orphans = 0;
        for waiting in table.waiting.values_mut() {
            if waiting.room == Some(self.id) {
                waiting.room = None;
                orphans += 1;
            }
        }
        table.open += orphans;
    }
}

/// One frame to draw; equal keys draw equal frames.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FrameKey {
    /// The snapshot's values, bit for bit.
    state: Box<[u64]>,
    pub quality: RenderQuality,
    pub camera: usize,
    pub width: u32,
    pub height: u32,
    pub depth: bool,
    /// The number of the look it is drawn with.
    pub look: u64,
}

impl FrameKey {
    /// The key of `camera` drawn from `snapshot` at a level, size, depth and look.
    pub fn new(
        snapshot: &RenderSnapshot,
        quality: RenderQuality,
        camera: usize,
        size: (u32, u32),
        depth: bool,
        look: u64,
    ) -> Self {
        FrameKey {
            state: snapshot.0.iter().map(|v| v.to_bits()).collect(),
            quality,
            camera,
            width: size.0,
            height: size.1,
            depth,
            look,
        }
    }
}

/// What the render threads did with the frames asked of them since the twin started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderCounts {
    /// Frames drawn.
    pub drawn: u64,
    /// Callers answered with a frame drawn for another caller.
    pub shared: u64,
    /// Frames dropped undrawn: every caller had gone or was past its deadline.
    pub shed: u64,
    /// Reads refused because the backlog was full.
    pub refused: u64,
}

/// A caller waiting for a frame.
struct Waiter {
    reply: oneshot::Sender<Result<Frame, TwinError>>,
    deadline: Option<Instant>,
}

/// A frame waiting to be drawn, and its callers.
struct Waiting {
    waiters: Vec<Waiter>,
    /// The reservation that queued it and counts it, if any.
    room: Option<u64>,
}

/// The backlog's state, under its lock.
#[derive(Default)]
struct Table {
    waiting: HashMap<FrameKey, Waiting>,
    /// Frames waiting that no reservation counts.
    open: usize,
    /// Frames the live reservations hold room for.
    reserved: usize,
    /// The id of the next reservation.
    next_room: u64,
    counts: RenderCounts,
    /// Mean time to draw a frame, seconds (a moving average; 0 before the first).
    draw_s: f64,
}

impl Table {
    /// Frames counted against the bound: those waiting outside any reservation, and the room
    /// reserved.
    fn in_use(&self) -> usize {
        self.open + self.reserved
    }

    /// Forgets a waiting frame, with its callers.
    fn remove(&mut self, key: &FrameKey) -> Vec<Waiter> {
        match self.waiting.remove(key) {
            Some(waiting) => {
                if waiting.room.is_none() {
                    self.open -= 1;
                }
                waiting.waiters
            }
            None => Vec::new(),
        }
    }
}

/// The frames waiting for `threads` render threads, at most `capacity` of them.
pub(crate) struct Backlog {
    table: Mutex<Table>,
    threads: usize,
    capacity: usize,
}

/// The callers of a drawing's frames, in camera order, and the keys that need drawing.
pub(crate) struct Admitted {
    pub replies: Vec<oneshot::Receiver<Result<Frame, TwinError>>>,
    pub new: Vec<FrameKey>,
}

/// Weight of the newest drawing in the mean drawing time.
const DRAW_TIME_WEIGHT: f64 = 0.2;

/// Bounds of a retry hint.
const RETRY_MIN: Duration = Duration::from_millis(10);
const RETRY_MAX: Duration = Duration::from_secs(30);

impl Backlog {
    /// A backlog for `threads` render threads.
    pub fn new(threads: usize) -> Self {
        Backlog {
            table: Mutex::new(Table::default()),
            threads: threads.max(1),
            capacity: threads.max(1) * FRAMES_PER_THREAD,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The refusal of `more` frames beyond those in use, with a hint at the mean drawing time.
    fn busy(&self, table: &mut Table, more: usize) -> TwinError {
        table.counts.refused += 1;
        let queued = table.in_use();
        let frames_ahead = (queued + more).saturating_sub(self.capacity).max(1) as f64;
        let wait = Duration::from_secs_f64(frames_ahead * table.draw_s / self.threads as f64);
        TwinError::RenderBusy {
            queued,
            capacity: self.capacity,
            retry_after_ms: wait.clamp(RETRY_MIN, RETRY_MAX).as_millis() as u64,
        }
    }

    /// Reserves room for `frames` frames drawn at once, or refuses at once when the backlog
    /// has not that much room left ([`TwinError::RenderBusy`], with a retry hint).
    pub fn reserve(self: &Arc<Self>, frames: usize) -> Result<FrameRoom, TwinError> {
        let mut table = self.lock();
        if table.in_use() + frames > self.capacity {
            return Err(self.busy(&mut table, frames));
        }
        table.reserved += frames;
        table.next_room += 1;
        Ok(FrameRoom {
            backlog: self.clone(),
            id: table.next_room,
            frames,
        })
    }

    /// Lets a drawing's frames in: each key joins its waiting frame or is queued anew.
    pub fn admit(&self, keys: Vec<FrameKey>, admission: Admission<'_>) -> Result<Admitted, TwinError> {
        let deadline = admission.deadline();
        if deadline.is_some_and(|d| Instant::now() >= d) {
            self.lock().counts.shed += keys.len() as u64;
            return Err(TwinError::DeadlinePassed);
        }
        let mut table = self.lock();
        let room = match admission {
            Admission::Read { .. } => {
                let fresh: HashSet<&FrameKey> = keys.iter().filter(|k| !table.waiting.contains_key(*k)).collect();
                let fresh = fresh.len();
                if table.in_use() + fresh > self.capacity {
                    return Err(self.busy(&mut table, fresh));
                }
                None
            }
            Admission::Reserved(room) => {
                debug_assert!(keys.len() <= room.frames, "a drawing larger than its room");
                Some(room.id)
            }
        };
        let mut admitted = Admitted {
            replies: Vec::with_capacity(keys.len()),
            new: Vec::new(),
        };
        for key in keys {
            let (reply, rx) = oneshot::channel();
            let waiter = Waiter { reply, deadline };
            match table.waiting.entry(key) {
                Entry::Occupied(mut entry) => entry.get_mut().waiters.push(waiter),
                Entry::Vacant(entry) => {
                    admitted.new.push(entry.key().clone());
                    entry.insert(Waiting {
                        waiters: vec![waiter],
                        room,
                    });
                    if room.is_none() {
                        table.open += 1;
                    }
                }
            }
            admitted.replies.push(rx);
        }
        Ok(admitted)
    }

    /// Before drawing `key`, at `now`: answers its callers past their deadline, forgets those
    /// gone, and says whether anyone still waits (if not, the frame is dropped and counted shed).
    pub fn claim(&self, key: &FrameKey, now: Instant) -> bool {
        let mut table = self.lock();
        let Some(waiting) = table.waiting.get_mut(key) else {
            return false;
        };
        waiting.waiters.retain(|w| !w.reply.is_closed());
        let (late, live): (Vec<Waiter>, Vec<Waiter>) = std::mem::take(&mut waiting.waiters)
            .into_iter()
            .partition(|w| w.deadline.is_some_and(|d| now >= d));
        for waiter in late {
            // A caller that stopped waiting meanwhile needs no answer.
            let _ = waiter.reply.send(Err(TwinError::DeadlinePassed));
        }
        if live.is_empty() {
            table.remove(key);
            table.counts.shed += 1;
            return false;
        }
        waiting.waiters = live;
        true
    }

    /// After drawing `key` (for `took`): answers everyone waiting for it, those who joined
    /// while it was drawn included.
    pub fn finish(&self, key: &FrameKey, frame: Result<Frame, TwinError>, took: Duration) {
        let mut table = self.lock();
        let waiters = table.remove(key);
        table.counts.drawn += 1;
        table.counts.shared += waiters.len().saturating_sub(1) as u64;
        let took = took.as_secs_f64();
        table.draw_s = if table.draw_s == 0.0 {
            took
        } else {
            table.draw_s + DRAW_TIME_WEIGHT * (took - table.draw_s)
        };
        drop(table);
        for waiter in waiters {
            let _ = waiter.reply.send(frame.clone());
        }
    }

    /// Forgets `key` unanswered (its render thread is gone): its callers see the twin stopped.
    pub fn abandon(&self, key: &FrameKey) {
        self.lock().remove(key);
    }

    /// What the render threads did so far.
    pub fn counts(&self) -> RenderCounts {
        self.lock().counts
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn key(camera: usize, q: f64) -> FrameKey {
        FrameKey::new(
            &RenderSnapshot(vec![q, 0.5].into()),
            RenderQuality::Fast,
            camera,
            (8, 8),
            false,
            0,
        )
    }

    fn frame() -> Frame {
        Frame {
            width: 1,
            height: 1,
            rgb: vec![1, 2, 3],
            depth: None,
        }
    }

    #[tokio::test]
    async fn identical_frames_asked_at_once_are_drawn_once_and_shared() {
        let backlog = Arc::new(Backlog::new(1));
        let read = Admission::Read { deadline: None };
        let first = backlog.admit(vec![key(0, 0.1), key(1, 0.1)], read).unwrap();
        let room = backlog.reserve(2).unwrap();
        let second = backlog
            .admit(vec![key(0, 0.1), key(1, 0.2)], Admission::Reserved(&room))
            .unwrap();
        assert_eq!(first.new, [key(0, 0.1), key(1, 0.1)]);
        assert_eq!(
            second.new,
            [key(1, 0.2)],
            "the same state and camera joins the waiting frame"
        );
        for k in [key(0, 0.1), key(1, 0.1), key(1, 0.2)] {
            assert!(backlog.claim(&k, Instant::now()));
            backlog.finish(&k, Ok(frame()), Duration::from_millis(5));
        }
        for rx in first.replies.into_iter().chain(second.replies) {
            assert_eq!(rx.await.unwrap().unwrap(), frame());
        }
        let counts = backlog.counts();
        assert_eq!((counts.drawn, counts.shared, counts.shed), (3, 1, 0));
    }

    #[tokio::test]
    async fn a_full_backlog_refuses_reads_and_reservations_with_a_hint() {
        let backlog = Arc::new(Backlog::new(1));
        let read = Admission::Read { deadline: None };
        let first = backlog.admit(vec![key(0, 0.0)], read).unwrap();
        assert!(backlog.claim(&first.new[0], Instant::now()));
        backlog.finish(&first.new[0], Ok(frame()), Duration::from_millis(40));
        let held: Vec<Admitted> = (0..FRAMES_PER_THREAD)
            .map(|i| backlog.admit(vec![key(0, i as f64 + 1.0)], read).unwrap())
            .collect();
        let refused = backlog.admit(vec![key(0, 99.0)], read).err().unwrap();
        let TwinError::RenderBusy {
            queued,
            capacity,
            retry_after_ms,
        } = refused
        else {
            panic!("{refused:?}");
        };
        assert_eq!((queued, capacity), (FRAMES_PER_THREAD, FRAMES_PER_THREAD));
        assert_eq!(retry_after_ms, 40, "one frame ahead at the mean drawing time");
        assert!(
            backlog.admit(vec![key(0, 1.0)], read).is_ok(),
            "a waiting frame can be shared"
        );
        let busy = backlog.reserve(2).err().unwrap();
        assert!(
            matches!(busy, TwinError::RenderBusy { retry_after_ms: 80, .. }),
            "two frames ahead: {busy:?}"
        );
        assert_eq!(backlog.counts().refused, 2);
        drop(held);
    }

    #[tokio::test]
    async fn reserved_room_counts_against_the_bound_until_it_is_given_back() {
        let backlog = Arc::new(Backlog::new(1));
        let read = Admission::Read { deadline: None };
        let room = backlog.reserve(FRAMES_PER_THREAD - 1).unwrap();
        assert_eq!(room.frames(), FRAMES_PER_THREAD - 1);
        assert!(
            backlog.admit(vec![key(0, 1.0), key(1, 1.0)], read).is_err(),
            "one frame of room left, two asked"
        );
        let one = backlog.admit(vec![key(0, 1.0)], read).unwrap();
        assert!(backlog.reserve(1).is_err(), "the bound is reached");
        // The reserved drawing itself is let in however full the backlog is, and its frames
        // are counted by the room, not twice.
        let keys: Vec<FrameKey> = (0..FRAMES_PER_THREAD - 1).map(|i| key(0, 10.0 + i as f64)).collect();
        let owed = backlog.admit(keys.clone(), Admission::Reserved(&room)).unwrap();
        assert_eq!(owed.new.len(), FRAMES_PER_THREAD - 1);
        assert!(backlog.reserve(1).is_err());
        for k in keys.iter().take(2) {
            assert!(backlog.claim(k, Instant::now()));
            backlog.finish(k, Ok(frame()), Duration::from_millis(5));
        }
        assert!(backlog.reserve(1).is_err(), "a room holds its frames until dropped");
        drop(owed);
        drop(room);
        // The room is given back; its 13 frames not drawn yet (their caller gone) count as any
        // other until a render thread drops them, like the read's.
        assert!(backlog.reserve(FRAMES_PER_THREAD - 14).is_ok());
        assert!(backlog.reserve(FRAMES_PER_THREAD - 13).is_err());
        for k in &keys[2..] {
            assert!(!backlog.claim(k, Instant::now()), "nobody waits for it");
        }
        assert!(
            backlog.reserve(FRAMES_PER_THREAD - 1).is_ok(),
            "all but the read's frame"
        );
        assert!(backlog.reserve(FRAMES_PER_THREAD).is_err());
        drop(one);
    }

    #[tokio::test]
    async fn frames_nobody_waits_for_are_dropped_undrawn() {
        let backlog = Arc::new(Backlog::new(1));
        let room = backlog.reserve(1).unwrap();
        let gone = backlog.admit(vec![key(0, 0.0)], Admission::Reserved(&room)).unwrap();
        drop(gone.replies);
        let now = Instant::now();
        assert!(!backlog.claim(&key(0, 0.0), now), "its caller has gone");
        let deadline = now + Duration::from_secs(60);
        let late = backlog
            .admit(
                vec![key(0, 1.0)],
                Admission::Read {
                    deadline: Some(deadline),
                },
            )
            .unwrap();
        assert!(!backlog.claim(&key(0, 1.0), deadline), "its caller's deadline passed");
        let answer = late.replies.into_iter().next().unwrap().await.unwrap();
        assert_eq!(answer, Err(TwinError::DeadlinePassed));
        assert_eq!(
            backlog
                .admit(vec![key(0, 2.0)], Admission::Read { deadline: Some(now) })
                .err(),
            Some(TwinError::DeadlinePassed)
        );
        assert_eq!(backlog.counts().shed, 3);
        assert_eq!(backlog.counts().drawn, 0);
    }
}
