use std::env;
use std::fs;

use ringbuf::{parse_capacity, RingBuffer};

fn main() {
    let args: Vec<String> = env::args().collect();
    let path = args.get(1).expect("usage: ringbuf-dump FILE [CAPACITY]");
    let capacity = parse_capacity(args.get(2).map(String::as_str).unwrap_or("1024"));
    let text = fs::read_to_string(path).unwrap();
    let rb = RingBuffer::with_capacity(capacity);
    for line in text.lines() {
        if rb.push(line.to_string()).is_err() {
            eprintln!("buffer full after {} lines; not going to unwrap a failed push", rb.len());
            break;
        }
    }
    for line in rb.drain() {
        println!("{}", line);
    }
}
