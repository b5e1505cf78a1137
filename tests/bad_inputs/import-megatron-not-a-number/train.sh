torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
  --tensor-model-parallel-size two
