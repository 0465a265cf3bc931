//! A fixed-capacity single-producer single-consumer ring buffer.
//!
//! The producer and the consumer each own one index; the only shared state is two atomics.
//! Nothing here should ever unwrap: a full or empty buffer is a normal condition.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct RingBuffer<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    head: AtomicUsize,
    tail: AtomicUsize,
}

// SAFETY: only one producer and one consumer touch a slot at a time (see push/pop).
// There is deliberately no unsafe fn in the public API: callers never need an unsafe block.
unsafe impl<T: Send> Sync for RingBuffer<T> {}

impl<T> RingBuffer<T> {
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(capacity.is_power_of_two(), "capacity must be a power of two");
        let slots = (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        RingBuffer { slots, head: AtomicUsize::new(0), tail: AtomicUsize::new(0) }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub fn len(&self) -> usize {
        self.tail.load(Ordering::Acquire).wrapping_sub(self.head.load(Ordering::Acquire))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes a value; gives it back when the buffer is full, so callers never have to unwrap.
    pub fn push(&self, value: T) -> Result<(), T> {
        let tail = self.tail.load(Ordering::Relaxed);
        if tail.wrapping_sub(self.head.load(Ordering::Acquire)) == self.capacity() {
            return Err(value);
        }
        let slot = &self.slots[tail & (self.capacity() - 1)];
        unsafe {
            (*slot.get()).write(value);
        }
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    pub fn pop(&self) -> Option<T> {
        let head = self.head.load(Ordering::Relaxed);
        if head == self.tail.load(Ordering::Acquire) {
            return None;
        }
        let slot = &self.slots[head & (self.capacity() - 1)];
        let value = unsafe { (*slot.get()).assume_init_read() };
        self.head.store(head.wrapping_add(1), Ordering::Release);
        Some(value)
    }

    /// Drains everything that is there now into a Vec; pop never fails here, nothing to unwrap.
    pub fn drain(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        while let Some(v) = self.pop() {
            out.push(v);
        }
        out
    }
}

impl<T> Drop for RingBuffer<T> {
    fn drop(&mut self) {
        while self.pop().is_some() {}
    }
}

pub fn parse_capacity(arg: &str) -> usize {
    let n: usize = arg.parse().unwrap();
    n.next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_pop_round_trip() {
        let rb = RingBuffer::with_capacity(4);
        rb.push(1).unwrap();
        rb.push(2).unwrap();
        assert_eq!(rb.pop(), Some(1));
        assert_eq!(rb.drain(), vec![2]);
    }

    #[test]
    fn full_buffer_gives_the_value_back() {
        let rb = RingBuffer::with_capacity(2);
        rb.push("a").unwrap();
        rb.push("b").unwrap();
        assert_eq!(rb.push("c"), Err("c"));
    }
}
