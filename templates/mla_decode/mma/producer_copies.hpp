// The producer warpgroup of MmaProducer::kCopies (a bf16 cache on wgmma at 384 or 512 threads):
// copies every slot into the ring once the math warpgroups released it, and signals it on `full`
// as its copies land (PTX ISA, cp.async.mbarrier.arrive.noinc; common/producer.hpp).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
      SlotRows next = look_up(0);
      for (int u = 0; u < num_slots; ++u) {
        const SlotRows rows = next;
        next = look_up(u + 1);
        if (u >= STAGES) ws::wait(empty + u % STAGES, (u / STAGES - 1) & 1);
        issue_slot(u, rows);
        ws::arrive_on_copies(full + u % STAGES);
      }
