pretrain_gpt.py --hidden-size 4096 --num-attention-heads 32
