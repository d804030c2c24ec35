import { Memory } from "@latchkey/core"
import { auditContract, storageContract } from "@latchkey/storage-testkit"
import { Layer } from "effect"

storageContract("memory", Memory.layerWith)
auditContract("memory", Layer.merge(Memory.layer, Memory.auditLayer))
