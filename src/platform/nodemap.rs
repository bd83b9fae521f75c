//! `PMI_process_mapping`: which node each rank of the job runs on, as the launcher says.
//!
//! The value is MPICH's vector form, `(vector,(start,count,size),...)`: each triple places
//! `size` consecutive ranks on each of the nodes `start .. start+count`, in order; when the
//! triples run out before the ranks do, the vector starts over (so `(vector,(0,2,1))` places
//! ranks 0, 2, 4, ... on node 0 and 1, 3, 5, ... on node 1). Hydra, hympiexec and Slurm's PMI
//! all publish it.

/// The node number of every rank of a job of `size` ranks, or `None` when `text` is not a
/// mapping that places every rank (an empty vector, a zero-sized block, malformed text).
pub fn parse(text: &str, size: usize) -> Option<Vec<usize>> {
    let body = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    let body = body.trim_start().strip_prefix("vector")?.trim_start();
    let body = body.strip_prefix(',')?;
    let mut blocks = Vec::new();
    for part in body.split("),") {
        let part = part.trim().trim_start_matches('(').trim_end_matches(')');
        let nums: Vec<usize> = part
            .split(',')
            .map(|n| n.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .ok()?;
        let [start, count, block] = nums[..] else {
            return None;
        };
        if count == 0 || block == 0 {
            return None;
        }
        blocks.push((start, count, block));
    }
    if blocks.is_empty() {
        return None;
    }
    let mut node_of = Vec::with_capacity(size);
    'fill: loop {
        for &(start, count, block) in &blocks {
            for node in start..start + count {
                for _ in 0..block {
                    if node_of.len() == size {
                        break 'fill;
                    }
                    node_of.push(node);
                }
            }
        }
    }
    Some(node_of)
}

/// The mapping text for `node_of` (a node number per rank): one triple per run of ranks on
/// one node, runs of equal length on consecutive nodes merged into one triple.
pub fn format(node_of: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &n in node_of {
        match runs.last_mut() {
            Some((node, len)) if *node == n => *len += 1,
            _ => runs.push((n, 1)),
        }
    }
    let mut triples: Vec<(usize, usize, usize)> = Vec::new();
    for (node, len) in runs {
        match triples.last_mut() {
            Some((start, count, block)) if *block == len && *start + *count == node => *count += 1,
            _ => triples.push((node, 1, len)),
        }
    }
    let parts: Vec<String> = triples
        .iter()
        .map(|(s, c, b)| format!("({s},{c},{b})"))
        .collect();
    format!("(vector,{})", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_cycles() {
        assert_eq!(parse("(vector,(0,1,4))", 4), Some(vec![0, 0, 0, 0]));
        assert_eq!(parse("(vector,(0,2,2))", 4), Some(vec![0, 0, 1, 1]));
        assert_eq!(parse("(vector,(0,2,1))", 5), Some(vec![0, 1, 0, 1, 0]));
        assert_eq!(
            parse(" (vector, (0,1,2), (1,1,1)) ", 3),
            Some(vec![0, 0, 1])
        );
    }

    #[test]
    fn malformed_is_none() {
        for bad in [
            "",
            "(vector)",
            "(vector,(0,0,1))",
            "(vector,(0,1))",
            "(list,(0,1,1))",
        ] {
            assert_eq!(parse(bad, 2), None, "{bad}");
        }
    }

    #[test]
    fn format_round_trips() {
        for node_of in [
            vec![0, 0, 1, 1],
            vec![0, 0, 0, 1, 1],
            vec![0, 1, 2, 3],
            vec![1, 1, 0, 0, 2],
            vec![0],
        ] {
            let text = format(&node_of);
            assert_eq!(parse(&text, node_of.len()), Some(node_of.clone()), "{text}");
        }
        assert_eq!(format(&[0, 0, 1, 1]), "(vector,(0,2,2))");
    }
}
