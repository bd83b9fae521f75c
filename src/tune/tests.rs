//! The tuner on cost functions whose best algorithm per region is known, and on the
//! simulator; the tables it writes go through the runtime's reader.

use super::eval::{oracle, score, selected};
use super::table::{rules, table, Bound};
use super::*;
use crate::coll::tuning::{Coll, Table};
use crate::sim::Algorithm;

/// Bcast over 1..4 nodes × 1..4 ranks, 1 B to 1 MiB: 8 layouts × 21 sizes.
fn bcast_space() -> Space {
    let algos = ["knomial", "scatter_allgather", "smp"].map(String::from);
    Space::new(
        Coll::Bcast,
        &[1, 2, 4],
        &[1, 2, 4],
        1,
        1 << 20,
        Some(&algos),
        &[2, 4],
    )
    .unwrap()
}

/// A cost function with known regions: `knomial:k=2` below 3333 B, `scatter_allgather`
/// above, `knomial:k=4` 20 % behind `knomial:k=2` everywhere, and the node-aware `smp`
/// twice as fast up to 1 KiB where it runs (several nodes with several ranks).
fn synthetic(l: Layout, b: usize, a: &Algorithm) -> Option<f64> {
    let scale = (l.ranks() as f64).log2();
    let b = b as f64;
    let small = 10.0 + 0.01 * b;
    let t = match (a.name.as_str(), a.k) {
        ("knomial", 2) => small,
        ("knomial", _) => 1.2 * small,
        ("scatter_allgather", _) => 40.0 + 0.001 * b,
        ("smp", _) if b <= 1024.0 => 0.5 * small,
        ("smp", _) => 2.0 * small,
        _ => return None,
    };
    Some(t * scale)
}

fn expected(l: Layout, b: usize) -> &'static str {
    if l.nodes > 1 && l.ppn > 1 && b <= 1024 {
        "smp"
    } else if (b as f64) < 30.0 / 0.009 {
        "knomial"
    } else {
        "scatter_allgather"
    }
}

#[test]
fn finds_the_known_regions_with_fewer_measurements_than_exhaustive_search() {
    let space = bcast_space();
    let mut t = Tuner::new(space.clone(), Settings::default());
    let stop = t.run(&mut Formula(synthetic), |_| {}).unwrap();
    eprintln!("{} samples", t.samples.len());
    assert_eq!(stop, Stop::Converged, "{} samples", t.samples.len());
    let measured = t.samples.len();
    assert!(
        measured * 2 < space.points(),
        "{measured} points of {}",
        space.points()
    );
    // Every 5th point is a non-power-of-two size.
    assert!(t.samples.iter().any(|s| !s.bytes.is_power_of_two()));
    let json = table(&[&t]).unwrap();
    let parsed = Table::parse(&json).unwrap_or_else(|e| panic!("{e}\n{json}"));
    let (truth, _) = oracle(&space, &mut Formula(synthetic), |_, _| {}).unwrap();
    let s = score(&parsed, &space, &truth);
    eprintln!("{s:?}");
    assert!(s.avg_slowdown <= 1.05, "{s:?}\n{json}");
    assert!(s.significant_mistakes <= 0.05, "{s:?}\n{json}");
    assert_eq!(s.unmeasured_picks, 0);
    let mut wrong = Vec::new();
    for &l in &space.layouts {
        for &b in &space.sizes {
            let c = selected(&parsed, &space, l.nodes, l.ppn, b).unwrap();
            if c.name != expected(l, b) || (c.name == "knomial" && c.k != 2) {
                wrong.push(format!("{l} {b}: {}:{}", c.name, c.k));
            }
        }
    }
    assert!(wrong.len() * 20 <= space.points(), "{wrong:?}\n{json}");
}

#[test]
fn the_table_says_what_the_model_chose_at_every_grid_point() {
    let space = bcast_space();
    let mut t = Tuner::new(
        space.clone(),
        Settings {
            budget: 30,
            ..Settings::default()
        },
    );
    t.run(&mut Formula(synthetic), |_| {}).unwrap();
    let parsed = Table::parse(&table(&[&t]).unwrap()).unwrap();
    for &l in &space.layouts {
        for &b in &space.sizes {
            let model = t.best(l, b, |_| true).unwrap().unwrap();
            let want = &space.algos[model];
            let got = selected(&parsed, &space, l.nodes, l.ppn, b).unwrap();
            assert_eq!(got.name, want.name, "{l} {b}");
            if want.name == "knomial" {
                assert_eq!(got.k, want.k, "{l} {b}");
            }
        }
    }
}

#[test]
fn rules_are_complete_and_pruned() {
    // One crossover between 2048 and 4096 on one node: two rules, the last `any`.
    let algos = ["knomial", "scatter_allgather"].map(String::from);
    let space = Space::new(Coll::Bcast, &[1], &[4], 1, 1 << 20, Some(&algos), &[2]).unwrap();
    let mut t = Tuner::new(
        space.clone(),
        Settings {
            non_pow2_every: 0,
            ..Settings::default()
        },
    );
    for i in 0..space.points() {
        let (l, b) = space.point(i);
        t.measure(&mut Formula(synthetic), l, b).unwrap();
    }
    t.fit().unwrap();
    let r = rules(&t, space.layouts[0]).unwrap();
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(
        matches!(r[0].0, Bound::UpTo(2048) | Bound::Below(4096)),
        "{r:?}"
    );
    assert_eq!(r[1].0, Bound::Any);
    assert_ne!(r[0].1, r[1].1);
}

#[test]
fn tunes_an_allreduce_on_the_simulator() {
    // 2 and 4 nodes of 2 ranks, 8 B to 64 KiB, on the built-in 100 Gb/s model.
    let model =
        crate::sim::Model::from_json(include_str!("../sim/params/fabric-100g.json")).unwrap();
    let algos = ["recursive_doubling", "ring", "knomial", "smp"].map(String::from);
    let space = Space::new(
        Coll::Allreduce,
        &[2, 4],
        &[2],
        8,
        1 << 16,
        Some(&algos),
        &[2, 4],
    )
    .unwrap();
    // Half the grid at most.
    let settings = Settings {
        budget: space.points() / 2,
        ..Settings::default()
    };
    let mut t = Tuner::new(space.clone(), settings);
    t.run(
        &mut Simulated {
            model: model.clone(),
        },
        |_| {},
    )
    .unwrap();
    let parsed = Table::parse(&table(&[&t]).unwrap()).unwrap();
    let (truth, cost) = oracle(&space, &mut Simulated { model }, |_, _| {}).unwrap();
    assert!(
        t.cost_us < cost,
        "tuning {} µs, exhaustive {cost} µs",
        t.cost_us
    );
    let s = score(&parsed, &space, &truth);
    eprintln!("{s:?} {} of {} points", t.samples.len(), space.points());
    assert!(s.avg_slowdown <= 1.10, "{s:?}");
    // The runtime reads what it wrote: every pick is one of the candidates.
    assert_eq!(s.unmeasured_picks, 0, "{s:?}");
}

#[test]
fn the_plot_names_every_chosen_algorithm() {
    let space = bcast_space();
    let mut t = Tuner::new(space.clone(), Settings::default());
    t.run(&mut Formula(synthetic), |_| {}).unwrap();
    let parsed = Table::parse(&table(&[&t]).unwrap()).unwrap();
    let svg = plot::choices_svg(&parsed, &space, "bcast");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for name in ["smp", "knomial:k=2", "scatter_allgather"] {
        assert!(svg.contains(&format!(">{name}</text>")), "{name} missing");
    }
    assert!(svg.matches("<rect").count() >= space.points() + 3);
}
