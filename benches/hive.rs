//! hive-rooms/1: the standings fold (the engine's bitmask board against the
//! readable reference fold) on a real room transcript, and whole episodes
//! per second under the published arms. Run: cargo bench --bench hive

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use witness::hive::board::{Board, Mark};
use witness::hive::episode::{play_in, Scratch};
use witness::hive::fold::standings;
use witness::hive::markers::{parse, Author, Trace};
use witness::hive::policy::{hive, hive_plus, RoomPolicy};
use witness::hive::room::{Room, OPTIONS};

const ROOMS: u64 = 500;

fn arms() -> Vec<(&'static str, RoomPolicy)> {
    let plus = hive_plus(5);
    let mut refute = plus.clone();
    refute.fold.refutation_cap = Some(2);
    let mut evidential = refute.clone();
    evidential.fold.require_evidential = true;
    vec![
        ("hive", hive(5)),
        ("hive+", plus),
        ("hive+ref", refute),
        ("hive+ev", evidential),
    ]
}

/// The traces of a room that runs out its 15-turn budget under hive+ev.
fn transcript() -> Vec<Trace> {
    let (_, p) = arms().pop().unwrap();
    let played = (0..ROOMS)
        .map(|i| witness::hive::episode::play(&Room::new(1, i, 5, 4, 90), &p, true))
        .find(|o| o.turns == p.budget)
        .expect("some room is exhausted");
    played
        .transcript
        .iter()
        .enumerate()
        .flat_map(|(i, t)| parse(i as u64 + 2, Author::Member(t.speaker as u8), &t.text))
        .collect()
}

fn fold(c: &mut Criterion) {
    let traces = transcript();
    let marks: Vec<Mark> = traces
        .iter()
        .map(|t| Mark::from_trace(t, |n| OPTIONS.iter().position(|o| *o == n).map(|i| i as u8)))
        .collect();
    let at = traces.last().unwrap().sequence;
    let mut g = c.benchmark_group("fold");
    for (name, p) in arms() {
        g.bench_with_input(BenchmarkId::new("board", name), &p, |b, p| {
            let mut board = Board::default();
            b.iter(|| board.fold(&marks, at, &p.fold))
        });
        g.bench_with_input(BenchmarkId::new("reference", name), &p, |b, p| {
            b.iter(|| standings(&traces, at, &p.fold).unwrap())
        });
    }
    g.finish();
}

fn episodes(c: &mut Criterion) {
    let rooms: Vec<Room> = (0..ROOMS).map(|i| Room::new(1, i, 5, 4, 90)).collect();
    let mut g = c.benchmark_group("episodes");
    g.throughput(Throughput::Elements(ROOMS));
    for (name, p) in arms() {
        g.bench_with_input(BenchmarkId::from_parameter(name), &p, |b, p| {
            let mut scratch = Scratch::default();
            b.iter(|| {
                rooms
                    .iter()
                    .map(|r| {
                        play_in(
                            &mut scratch,
                            r,
                            p,
                            false,
                            &mut witness::hive::external::Writer::Builtin,
                        )
                        .turns
                    })
                    .sum::<u64>()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, fold, episodes);
criterion_main!(benches);
